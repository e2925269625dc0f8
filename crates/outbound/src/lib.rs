//! The one outbound HTTP client.
//!
//! Every request Quarry makes to another machine (remote embedders, webhooks, remote
//! instances, telemetry) goes through a [`Client`], which only connects to addresses inside
//! the networks the operator allowed (`--experimental-allowed-ip-networks`; loopback only by
//! default). The host name is resolved once, every address it resolves to is checked, and the
//! connection goes to a checked address (a second lookup cannot swap in another one); a host
//! with no allowed address fails before any byte leaves the machine. Redirects are not
//! followed.
//!
//! The process has one client ([`configure`], [`client`]); [`instance`] reads what another
//! search instance answers.

pub mod instance;

use std::fmt;
use std::net::IpAddr;
use std::sync::{Arc, RwLock};
use std::time::Duration;

use api_types::{Code, Error, Result};
use ureq::config::Config;
use ureq::unversioned::resolver::{DefaultResolver, ResolvedSocketAddrs, Resolver};
use ureq::unversioned::transport::{DefaultConnector, NextTimeout};

/// The client of this process, once configured.
static CLIENT: RwLock<Option<Client>> = RwLock::new(None);

/// Sets the networks every outbound request of this process may reach (CIDRs, or `any`).
pub fn configure(allowed: &[String]) -> Result<()> {
    let client = Client::new(allowed)?;
    *CLIENT.write().unwrap_or_else(|e| e.into_inner()) = Some(client);
    Ok(())
}

/// The one outbound client of this process: remote embedders, remote instances, forwarded
/// writes, webhooks. Loopback only until [`configure`] says otherwise.
pub fn client() -> Client {
    CLIENT
        .read()
        .unwrap_or_else(|e| e.into_inner())
        .clone()
        .unwrap_or_else(Client::loopback)
}

/// The networks a [`Client`] may reach when the operator set none.
pub const LOOPBACK_NETWORKS: [&str; 2] = ["127.0.0.0/8", "::1/128"];

/// One allowed network.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Net {
    V4(u32, u8),
    V6(u128, u8),
}

impl Net {
    fn parse(cidr: &str) -> Option<Net> {
        let (addr, prefix) = cidr.trim().split_once('/')?;
        let prefix: u8 = prefix.parse().ok()?;
        match addr.parse::<IpAddr>().ok()? {
            IpAddr::V4(a) if prefix <= 32 => Some(Net::V4(u32::from(a), prefix)),
            IpAddr::V6(a) if prefix <= 128 => Some(Net::V6(u128::from(a), prefix)),
            _ => None,
        }
    }

    fn contains(self, ip: IpAddr) -> bool {
        // An IPv4-mapped IPv6 address is its IPv4 address.
        let ip = match ip {
            IpAddr::V6(v6) => v6.to_ipv4_mapped().map(IpAddr::V4).unwrap_or(ip),
            ip => ip,
        };
        match (self, ip) {
            (Net::V4(net, p), IpAddr::V4(a)) => {
                let mask = if p == 0 { 0 } else { u32::MAX << (32 - p) };
                (u32::from(a) & mask) == (net & mask)
            }
            (Net::V6(net, p), IpAddr::V6(a)) => {
                let mask = if p == 0 { 0 } else { u128::MAX << (128 - p) };
                (u128::from(a) & mask) == (net & mask)
            }
            _ => false,
        }
    }
}

/// Which addresses may be reached.
#[derive(Debug, Clone)]
struct Allowlist {
    any: bool,
    nets: Vec<Net>,
}

impl Allowlist {
    fn allows(&self, ip: IpAddr) -> bool {
        self.any || self.nets.iter().any(|n| n.contains(ip))
    }
}

/// Resolves as the system does, then keeps only the allowed addresses.
#[derive(Debug)]
struct CheckedResolver {
    allowed: Arc<Allowlist>,
}

impl Resolver for CheckedResolver {
    fn resolve(
        &self,
        uri: &ureq::http::Uri,
        config: &Config,
        timeout: NextTimeout,
    ) -> std::result::Result<ResolvedSocketAddrs, ureq::Error> {
        let all = DefaultResolver::default().resolve(uri, config, timeout)?;
        let mut kept = self.empty();
        for addr in all.iter() {
            if self.allowed.allows(addr.ip()) {
                kept.push(*addr);
            }
        }
        if kept.is_empty() {
            let host = uri.host().unwrap_or_default();
            let addrs: Vec<String> = all.iter().map(|a| a.ip().to_string()).collect();
            return Err(ureq::Error::Io(std::io::Error::new(
                std::io::ErrorKind::PermissionDenied,
                NotAllowed(format!(
                    "`{host}` ({}) is outside the networks outbound requests may reach; allow it with `--experimental-allowed-ip-networks`",
                    addrs.join(", ")
                )),
            )));
        }
        Ok(kept)
    }
}

/// The message of a refused address (kept apart so callers can tell it from network errors).
#[derive(Debug)]
struct NotAllowed(String);

impl fmt::Display for NotAllowed {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for NotAllowed {}

/// Why a request got no answer.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Failure {
    /// The host resolves to no allowed address: nothing was sent. Retrying cannot help.
    NotAllowed(String),
    /// The network failed (connection refused, reset, a bad URL): maybe transient.
    Transport(String),
    /// No answer within the time allowed.
    Timeout(String),
}

impl fmt::Display for Failure {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Failure::NotAllowed(m) | Failure::Transport(m) | Failure::Timeout(m) => f.write_str(m),
        }
    }
}

/// An answer: its status and body, whatever the status.
#[derive(Debug, Clone)]
pub struct Response {
    pub status: u16,
    pub body: Vec<u8>,
}

/// An HTTP client restricted to the allowed networks. Cheap to clone and share.
#[derive(Clone)]
pub struct Client {
    allowed: Arc<Allowlist>,
    sources: Vec<String>,
}

impl fmt::Debug for Client {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Client")
            .field("allowed", &self.sources)
            .finish()
    }
}

impl Client {
    /// `allowed`: CIDRs (`10.0.0.0/8`, `::1/128`), or the single word `any`.
    pub fn new(allowed: &[String]) -> Result<Client> {
        let mut list = Allowlist {
            any: false,
            nets: Vec::new(),
        };
        for a in allowed {
            if a.trim() == "any" {
                list.any = true;
                continue;
            }
            let net = Net::parse(a).ok_or_else(|| {
                Error::new(
                    Code::BadRequest,
                    format!(
                        "`{a}` is not a network: expected a CIDR such as `10.0.0.0/8`, or `any`"
                    ),
                )
            })?;
            list.nets.push(net);
        }
        Ok(Client {
            allowed: Arc::new(list),
            sources: allowed.to_vec(),
        })
    }

    /// Only loopback addresses.
    pub fn loopback() -> Client {
        let nets: Vec<String> = LOOPBACK_NETWORKS.iter().map(|s| s.to_string()).collect();
        Client::new(&nets).expect("the loopback networks parse")
    }

    /// The networks as configured.
    pub fn allowed(&self) -> &[String] {
        &self.sources
    }

    /// Whether `ip` may be reached.
    pub fn allows(&self, ip: IpAddr) -> bool {
        self.allowed.allows(ip)
    }

    fn agent(&self, timeout: Duration) -> ureq::Agent {
        let config = Config::builder()
            .http_status_as_error(false)
            .max_redirects(0)
            .timeout_global(Some(timeout))
            .timeout_connect(Some(timeout.min(Duration::from_secs(10))))
            .build();
        ureq::Agent::with_parts(
            config,
            DefaultConnector::default(),
            CheckedResolver {
                allowed: self.allowed.clone(),
            },
        )
    }

    /// POSTs `body` as JSON to `url` with `headers`, within `timeout`.
    pub fn post_json(
        &self,
        url: &str,
        headers: &[(String, String)],
        body: &serde_json::Value,
        timeout: Duration,
    ) -> std::result::Result<Response, Failure> {
        let bytes = serde_json::to_vec(body).map_err(|e| Failure::Transport(e.to_string()))?;
        let mut all = vec![("Content-Type".to_string(), "application/json".to_string())];
        all.extend_from_slice(headers);
        self.send("POST", url, &all, &bytes, timeout)
    }

    /// Sends one request (`method` among GET, POST, PUT, PATCH, DELETE) with `headers` and
    /// `body` (ignored for GET), within `timeout`; the answer whatever its status.
    pub fn send(
        &self,
        method: &str,
        url: &str,
        headers: &[(String, String)],
        body: &[u8],
        timeout: Duration,
    ) -> std::result::Result<Response, Failure> {
        let agent = self.agent(timeout);
        let answer = match method {
            "GET" => with_headers(agent.get(url), headers).call(),
            "DELETE" if body.is_empty() => with_headers(agent.delete(url), headers).call(),
            "DELETE" => with_headers(agent.delete(url).force_send_body(), headers).send(body),
            "POST" => with_headers(agent.post(url), headers).send(body),
            "PUT" => with_headers(agent.put(url), headers).send(body),
            "PATCH" => with_headers(agent.patch(url), headers).send(body),
            other => return Err(Failure::Transport(format!("unsupported method `{other}`"))),
        };
        match answer {
            Ok(mut res) => {
                let status = res.status().as_u16();
                let body = res
                    .body_mut()
                    .with_config()
                    .limit(64 << 20)
                    .read_to_vec()
                    .map_err(|e| Failure::Transport(e.to_string()))?;
                Ok(Response { status, body })
            }
            Err(ureq::Error::Io(e)) if e.get_ref().is_some_and(|i| i.is::<NotAllowed>()) => {
                Err(Failure::NotAllowed(e.to_string()))
            }
            Err(ureq::Error::Timeout(t)) => Err(Failure::Timeout(format!("timed out ({t})"))),
            Err(e) => Err(Failure::Transport(e.to_string())),
        }
    }
}

fn with_headers<B>(
    mut req: ureq::RequestBuilder<B>,
    headers: &[(String, String)],
) -> ureq::RequestBuilder<B> {
    for (k, v) in headers {
        req = req.header(k.as_str(), v.as_str());
    }
    req
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::{Read, Write};
    use std::net::TcpListener;

    #[test]
    fn networks() {
        let c = Client::new(&["10.0.0.0/8".into(), "::1/128".into()]).unwrap();
        assert!(c.allows("10.1.2.3".parse().unwrap()));
        assert!(!c.allows("11.0.0.1".parse().unwrap()));
        assert!(c.allows("::1".parse().unwrap()));
        assert!(c.allows("::ffff:10.0.0.1".parse().unwrap()));
        assert!(!Client::loopback().allows("192.168.1.1".parse().unwrap()));
        assert!(Client::new(&["any".into()])
            .unwrap()
            .allows("8.8.8.8".parse().unwrap()));
        assert!(Client::new(&["10.0.0.0".into()]).is_err());
        assert!(Client::new(&["10.0.0.0/33".into()]).is_err());
    }

    #[test]
    fn loopback_answers_and_outside_is_refused_before_connecting() {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let port = listener.local_addr().unwrap().port();
        let server = std::thread::spawn(move || {
            let (mut s, _) = listener.accept().unwrap();
            let mut buf = [0u8; 4096];
            let n = s.read(&mut buf).unwrap();
            let req = String::from_utf8_lossy(&buf[..n]).to_string();
            s.write_all(b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\nConnection: close\r\n\r\n{}")
                .unwrap();
            req
        });
        let c = Client::loopback();
        let url = format!("http://127.0.0.1:{port}/x");
        let headers = [("X-Test".to_string(), "1".to_string())];
        let r = c
            .post_json(
                &url,
                &headers,
                &serde_json::json!({"a": 1}),
                Duration::from_secs(5),
            )
            .unwrap();
        assert_eq!((r.status, r.body.as_slice()), (200, &b"{}"[..]));
        let seen = server.join().unwrap();
        assert!(seen.starts_with("POST /x "), "{seen}");
        assert!(seen.to_lowercase().contains("x-test: 1"), "{seen}");
        // A documentation address (TEST-NET-1): refused by the allowlist, never connected.
        let started = std::time::Instant::now();
        let e = c
            .post_json(
                "http://192.0.2.1/",
                &[],
                &serde_json::json!({}),
                Duration::from_secs(30),
            )
            .unwrap_err();
        assert!(matches!(e, Failure::NotAllowed(_)), "{e:?}");
        assert!(e.to_string().contains("outside the networks"), "{e}");
        assert!(started.elapsed() < Duration::from_secs(5));
    }
}
