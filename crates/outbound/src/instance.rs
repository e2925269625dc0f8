//! Asking another search instance (Quarry or Meilisearch) of a network: one `POST
//! /multi-search`, and what its answer means. A remote that cannot be reached, refuses the
//! key, times out or answers something else becomes the error `remoteErrors` shows.

use std::time::Duration;

use api_types::{Code, Error, Result};
use serde_json::Value;

use crate::{Client, Failure};

/// The header that asks a Quarry instance for each hit's runs (`_federation._runs`).
pub const RUNS_HEADER: &str = "Quarry-Federation-Runs";
/// The header that asks a Quarry instance what its queries' words derive from, instead of
/// searching.
pub const CANDIDATES_HEADER: &str = "Quarry-Derivation-Candidates";

/// POSTs the federated multi-search `request` to the instance at `base_url` (with its
/// `api_key`, and `header: true`), within `timeout`; its JSON answer.
pub fn multi_search(
    client: &Client,
    base_url: &str,
    api_key: Option<&str>,
    header: &str,
    request: &Value,
    timeout: Duration,
) -> Result<Value> {
    let mut headers = vec![(header.to_string(), "true".to_string())];
    if let Some(key) = api_key {
        headers.push(("Authorization".into(), format!("Bearer {key}")));
    }
    let url = format!("{}/multi-search", base_url.trim_end_matches('/'));
    let answer = client
        .post_json(&url, &headers, request, timeout)
        .map_err(|f| match f {
            Failure::Timeout(_) => Error::new(
                Code::RemoteTimeout,
                format!(
                    "remote host did not answer within {} ms",
                    timeout.as_millis()
                ),
            ),
            Failure::NotAllowed(m) | Failure::Transport(m) => Error::new(
                Code::ProxyCouldNotSendRequest,
                format!("error sending request: {m}"),
            ),
        })?;
    match answer.status {
        200..=299 => serde_json::from_slice(&answer.body).map_err(|_| Error::remote_bad_response(&answer.body)),
        401 | 403 => Err(Error::new(
            Code::RemoteInvalidApiKey,
            "could not authenticate against the remote host\n  - hint: check that the remote instance was registered with a valid API key having the `search` action",
        )),
        status => {
            let message = serde_json::from_slice::<Value>(&answer.body)
                .ok()
                .and_then(|v| v.get("message").and_then(Value::as_str).map(String::from))
                .unwrap_or_else(|| String::from_utf8_lossy(&answer.body).into_owned());
            Err(Error::new(
                Code::RemoteRemoteError,
                format!("remote host responded with code {status}:\n  - response from remote: {message}"),
            ))
        }
    }
}
