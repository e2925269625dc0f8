//! One HTTP request through the engine's outbound client (the only one the server has): the
//! TypeScript layer forwards writes and network changes to the other instances with it.

use std::time::Duration;

use napi::bindgen_prelude::*;
use napi_derive::napi;

/// The answer of [`outbound_request`]: a status and a body, or why there is none.
#[napi(object)]
pub struct OutboundAnswer {
    /// The HTTP status (0 when no answer came).
    pub status: u32,
    pub body: Buffer,
    /// Why no answer came: `refused` (outside the allowed networks; nothing was sent),
    /// `transport` (the network failed) or `timeout`.
    pub failure: Option<String>,
    pub message: Option<String>,
}

pub struct OutboundTask {
    method: String,
    url: String,
    headers: Vec<(String, String)>,
    body: Vec<u8>,
    timeout: Duration,
}

impl Task for OutboundTask {
    type Output = std::result::Result<outbound::Response, outbound::Failure>;
    type JsValue = OutboundAnswer;

    fn compute(&mut self) -> Result<Self::Output> {
        Ok(outbound::client().send(
            &self.method,
            &self.url,
            &self.headers,
            &self.body,
            self.timeout,
        ))
    }

    fn resolve(&mut self, _env: Env, output: Self::Output) -> Result<OutboundAnswer> {
        Ok(match output {
            Ok(r) => OutboundAnswer {
                status: r.status as u32,
                body: r.body.into(),
                failure: None,
                message: None,
            },
            Err(f) => {
                let kind = match f {
                    outbound::Failure::NotAllowed(_) => "refused",
                    outbound::Failure::Transport(_) => "transport",
                    outbound::Failure::Timeout(_) => "timeout",
                };
                OutboundAnswer {
                    status: 0,
                    body: Vec::new().into(),
                    failure: Some(kind.into()),
                    message: Some(f.to_string()),
                }
            }
        })
    }
}

/// Sends `method url` with `headers` (`[name, value]` pairs) and `body` within `timeoutMs`,
/// off the JS thread. Never rejects on a network failure: `failure` says what happened.
#[napi(ts_return_type = "Promise<OutboundAnswer>")]
pub fn outbound_request(
    method: String,
    url: String,
    headers: Vec<Vec<String>>,
    body: Buffer,
    timeout_ms: u32,
) -> AsyncTask<OutboundTask> {
    AsyncTask::new(OutboundTask {
        method,
        url,
        headers: headers
            .into_iter()
            .filter_map(|h| match h.as_slice() {
                [k, v] => Some((k.clone(), v.clone())),
                _ => None,
            })
            .collect(),
        body: body.to_vec(),
        timeout: Duration::from_millis(timeout_ms as u64),
    })
}

/// The header one instance sends another to get each federated hit's score runs (see the
/// engine's `search::remote`).
#[napi]
pub const FEDERATION_RUNS_HEADER: &str = outbound::instance::RUNS_HEADER;

/// The header one instance sends another to learn what its queries' words derive from (see
/// the engine's `search::query::pins`).
#[napi]
pub const DERIVATION_CANDIDATES_HEADER: &str = outbound::instance::CANDIDATES_HEADER;

/// The instances of a network, reached through the one outbound client: what the engine's
/// federation asks of them, sent.
pub(crate) struct OutboundPeers;

impl engine::Peers for OutboundPeers {
    fn multi_search(
        &self,
        remote: &engine::Remote,
        asking: engine::Asking,
        request: &serde_json::Value,
        timeout: std::time::Duration,
    ) -> api_types::Result<serde_json::Value> {
        let header = match asking {
            engine::Asking::Hits => outbound::instance::RUNS_HEADER,
            engine::Asking::Candidates => outbound::instance::CANDIDATES_HEADER,
        };
        outbound::instance::multi_search(
            &outbound::client(),
            &remote.url,
            remote.api_key.as_deref(),
            header,
            request,
            timeout,
        )
    }
}
