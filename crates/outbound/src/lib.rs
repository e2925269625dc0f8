//! The one outbound HTTP client.
//!
//! Every request Quarry makes to another machine (remote embedders, webhooks, remote
//! instances, telemetry) goes through a [`Client`], which only connects to addresses inside
//! the networks the operator allowed (`--experimental-allowed-ip-networks`; loopback only by
//! default). A refused address fails the request before any byte leaves the machine.

use api_types::Result;

/// The networks a [`Client`] may reach when the operator set none.
pub const LOOPBACK_NETWORKS: [&str; 2] = ["127.0.0.0/8", "::1/128"];

/// An HTTP client restricted to the allowed networks. Cheap to clone and share.
#[derive(Debug, Clone)]
pub struct Client {
    allowed: Vec<String>,
}

impl Client {
    /// `allowed`: CIDRs, or the single word `any`.
    pub fn new(allowed: &[String]) -> Result<Client> {
        Ok(Client {
            allowed: allowed.to_vec(),
        })
    }

    /// Only loopback addresses.
    pub fn loopback() -> Client {
        Client {
            allowed: LOOPBACK_NETWORKS.iter().map(|s| s.to_string()).collect(),
        }
    }

    pub fn allowed(&self) -> &[String] {
        &self.allowed
    }
}
