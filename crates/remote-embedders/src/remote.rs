//! The remote sources: `rest` (any API, described by request and response templates),
//! `openAi` and `ollama` (fixed shapes of the same idea). Requests go through the `outbound`
//! client only. A failed request is tried again (network errors, time-outs, 5xx and 429, up
//! to [`ATTEMPTS`] times with a growing pause, and not once [`configure`]'s retry duration
//! has passed since the first try); a 4xx or an answer of the wrong shape fails at once.
//! Every failure is a `vector_embedding_error` naming the embedder and the cause.
//!
//! REST templates, as Meilisearch reads them: in `request`, the string `"{{text}}"` stands
//! for one text; an array whose first item holds `{{text}}` and whose second item is
//! `"{{..}}"` stands for as many items as texts (batched input). In `response`,
//! `"{{embedding}}"` marks where an embedding is; an array `[<item>, "{{..}}"]` repeats its
//! item once per text.

use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::Duration;

use api_types::{Code, Error, Result};
use serde_json::{json, Map, Value};

use embedders::rest_template::{EMBEDDING, FRAGMENT, REPEAT, TEXT};
use embedders::{Embed, EmbedderConfig, Embedding, Source};

/// Tries per request.
pub const ATTEMPTS: u32 = 3;
/// How long one request may take unless configured (milliseconds).
const DEFAULT_TIMEOUT_MS: u64 = 30_000;
/// How long one request may take, and how long after its first try it may still be tried
/// again (`u64::MAX`: only [`ATTEMPTS`] bounds it), in milliseconds; see [`configure`].
static TIMEOUT_MS: AtomicU64 = AtomicU64::new(DEFAULT_TIMEOUT_MS);
static RETRY_FOR_MS: AtomicU64 = AtomicU64::new(u64::MAX);

/// Sets, for every remote embedder of the process, how long one request may take and for
/// how long after a request's first try it may be tried again (`None`: the defaults, 30 s
/// and no bound but the number of attempts). Meilisearch's
/// `MEILI_EXPERIMENTAL_REST_EMBEDDER_TIMEOUT_SECONDS` and
/// `MEILI_EXPERIMENTAL_REST_EMBEDDER_MAX_RETRY_DURATION_SECONDS`.
pub fn configure(timeout: Option<Duration>, retry_for: Option<Duration>) {
    let ms = |d: Duration| u64::try_from(d.as_millis()).unwrap_or(u64::MAX);
    TIMEOUT_MS.store(
        timeout.map_or(DEFAULT_TIMEOUT_MS, ms).max(1),
        Ordering::Relaxed,
    );
    RETRY_FOR_MS.store(retry_for.map_or(u64::MAX, ms), Ordering::Relaxed);
}
/// Texts per request for sources that take several.
const BATCH: usize = 64;

fn error(name: &str, cause: impl std::fmt::Display) -> Error {
    Error::new(
        Code::VectorEmbeddingError,
        format!("Error while generating embeddings: runtime error: embedder `{name}`: {cause}"),
    )
}

/// How requests and responses look.
#[derive(Debug, Clone)]
enum Shape {
    Rest {
        request: Value,
        response: Value,
        /// `{{fragment}}` when the embedder has fragments, else `{{text}}`.
        placeholder: &'static str,
    },
    OpenAi {
        model: String,
        dimensions: Option<usize>,
    },
    /// `/api/embed` (batched `input` → `embeddings`), or the older `/api/embeddings`
    /// (`prompt` → `embedding`).
    Ollama { model: String, legacy: bool },
}

/// A remote embedder.
pub struct Remote {
    name: String,
    url: String,
    headers: Vec<(String, String)>,
    shape: Shape,
    client: outbound::Client,
    /// Configured, or learnt from the first answer (0 before it).
    dimensions: AtomicUsize,
    configured: Option<usize>,
}

/// The remote embedder of `config` (`rest`, `openAi`, `ollama`); None for other sources.
pub fn build_remote(
    name: &str,
    config: &EmbedderConfig,
    client: &outbound::Client,
) -> Option<Result<Arc<dyn Embed>>> {
    let bearer = |key: &Option<String>| {
        key.as_ref()
            .map(|k| ("Authorization".to_string(), format!("Bearer {k}")))
    };
    let (url, mut headers, shape) = match &config.source {
        Source::Rest {
            url,
            api_key,
            request,
            response,
            headers,
            fragments,
        } => {
            let mut h: Vec<(String, String)> = headers
                .iter()
                .filter_map(|(k, v)| v.as_str().map(|v| (k.clone(), v.to_string())))
                .collect();
            h.extend(bearer(api_key));
            (
                url.clone(),
                h,
                Shape::Rest {
                    request: request.clone(),
                    response: response.clone(),
                    placeholder: if fragments.is_some() { FRAGMENT } else { TEXT },
                },
            )
        }
        Source::OpenAi {
            url,
            api_key,
            model,
        } => (
            url.clone()
                .unwrap_or_else(|| "https://api.openai.com/v1/embeddings".into()),
            bearer(api_key).into_iter().collect(),
            Shape::OpenAi {
                model: model
                    .clone()
                    .unwrap_or_else(|| "text-embedding-3-small".into()),
                dimensions: config.dimensions,
            },
        ),
        Source::Ollama {
            url,
            api_key,
            model,
        } => {
            let url = url
                .clone()
                .unwrap_or_else(|| "http://localhost:11434/api/embed".into());
            let legacy = url.trim_end_matches('/').ends_with("/api/embeddings");
            (
                url,
                bearer(api_key).into_iter().collect(),
                Shape::Ollama {
                    model: model.clone().unwrap_or_default(),
                    legacy,
                },
            )
        }
        _ => return None,
    };
    headers.retain(|(k, _)| !k.eq_ignore_ascii_case("content-type"));
    let configured = config.dimensions.or(match &shape {
        Shape::OpenAi { model, .. } => openai_dimensions(model),
        _ => None,
    });
    Some(Ok(Arc::new(Remote {
        name: name.to_string(),
        url,
        headers,
        shape,
        client: client.clone(),
        dimensions: AtomicUsize::new(configured.unwrap_or(0)),
        configured,
    })))
}

/// The dimensions of OpenAI's models when none are configured.
fn openai_dimensions(model: &str) -> Option<usize> {
    match model {
        "text-embedding-3-large" => Some(3072),
        "text-embedding-3-small" | "text-embedding-ada-002" => Some(1536),
        _ => None,
    }
}

impl Remote {
    fn batch(&self) -> usize {
        match &self.shape {
            Shape::Rest { request, .. } if has_repeat(request) => BATCH,
            Shape::Rest { .. } => 1,
            Shape::Ollama { legacy: true, .. } => 1,
            _ => BATCH,
        }
    }

    fn request_body(&self, inputs: &[Value]) -> Value {
        let texts = || -> Vec<&str> { inputs.iter().map(|v| v.as_str().unwrap_or("")).collect() };
        match &self.shape {
            Shape::Rest {
                request,
                placeholder,
                ..
            } => fill(request, inputs, placeholder),
            Shape::OpenAi { model, dimensions } => {
                let mut body = json!({ "input": texts(), "model": model });
                if let (Some(d), true) = (dimensions, model != "text-embedding-ada-002") {
                    body["dimensions"] = json!(d);
                }
                body
            }
            Shape::Ollama {
                model,
                legacy: true,
            } => json!({ "model": model, "prompt": texts()[0] }),
            Shape::Ollama { model, .. } => json!({ "model": model, "input": texts() }),
        }
    }

    fn parse(&self, body: &Value, n: usize) -> std::result::Result<Vec<Embedding>, String> {
        let found = match &self.shape {
            Shape::Rest { response, .. } => {
                let mut out = Vec::new();
                extract(response, body, &mut out)?;
                out
            }
            Shape::OpenAi { .. } => {
                let data = body["data"]
                    .as_array()
                    .ok_or("the answer has no `data` array")?;
                let mut items: Vec<(u64, Embedding)> = Vec::with_capacity(data.len());
                for (i, d) in data.iter().enumerate() {
                    let index = d["index"].as_u64().unwrap_or(i as u64);
                    items.push((index, floats(&d["embedding"], "data[].embedding")?));
                }
                items.sort_by_key(|(i, _)| *i);
                items.into_iter().map(|(_, e)| e).collect()
            }
            Shape::Ollama { legacy: true, .. } => vec![floats(&body["embedding"], "embedding")?],
            Shape::Ollama { .. } => body["embeddings"]
                .as_array()
                .ok_or("the answer has no `embeddings` array")?
                .iter()
                .map(|e| floats(e, "embeddings[]"))
                .collect::<std::result::Result<_, _>>()?,
        };
        if found.len() != n {
            return Err(format!(
                "expected {n} embeddings, the answer holds {}",
                found.len()
            ));
        }
        Ok(found)
    }

    /// A failed answer, as an error message shows it (its body cut to 200 characters).
    fn answered(&self, r: &outbound::Response) -> String {
        let body: String = String::from_utf8_lossy(&r.body).chars().take(200).collect();
        format!("`{}` answered {}: {body}", self.url, r.status)
    }

    /// One request, tried again on transient failures.
    fn send(&self, inputs: &[Value]) -> Result<Vec<Embedding>> {
        let body = self.request_body(inputs);
        let timeout = Duration::from_millis(TIMEOUT_MS.load(Ordering::Relaxed));
        let retry_for = Duration::from_millis(RETRY_FOR_MS.load(Ordering::Relaxed));
        let first = std::time::Instant::now();
        let mut last = String::new();
        let mut tried = 0;
        for attempt in 0..ATTEMPTS {
            if attempt > 0 {
                if first.elapsed() >= retry_for {
                    break;
                }
                std::thread::sleep(Duration::from_millis(100 * 3u64.pow(attempt - 1)));
            }
            tried += 1;
            match self
                .client
                .post_json(&self.url, &self.headers, &body, timeout)
            {
                Err(outbound::Failure::NotAllowed(m)) => return Err(error(&self.name, m)),
                Err(outbound::Failure::Transport(m) | outbound::Failure::Timeout(m)) => {
                    last = format!("could not reach `{}`: {m}", self.url);
                }
                Ok(r) if r.status == 429 || r.status >= 500 => last = self.answered(&r),
                Ok(r) if r.status >= 400 => return Err(error(&self.name, self.answered(&r))),
                Ok(r) => {
                    let value: Value = serde_json::from_slice(&r.body).map_err(|e| {
                        error(
                            &self.name,
                            format!("the answer of `{}` is not JSON: {e}", self.url),
                        )
                    })?;
                    return self.parse(&value, inputs.len()).map_err(|m| {
                        error(
                            &self.name,
                            format!("unexpected answer from `{}`: {m}", self.url),
                        )
                    });
                }
            }
        }
        Err(error(
            &self.name,
            format!(
                "{last} (after {tried} attempt{})",
                if tried == 1 { "" } else { "s" }
            ),
        ))
    }
}

impl Remote {
    /// Embeds `inputs` (texts, or rendered fragments), a batch per request.
    fn embed_inputs(&self, inputs: &[Value]) -> Result<Vec<Embedding>> {
        let mut out = Vec::with_capacity(inputs.len());
        for chunk in inputs.chunks(self.batch()) {
            let vectors = self.send(chunk)?;
            for v in &vectors {
                let expected = self.dimensions.load(Ordering::Relaxed);
                if expected == 0 {
                    self.dimensions.store(v.len(), Ordering::Relaxed);
                } else if v.len() != expected {
                    return Err(error(
                        &self.name,
                        format!(
                            "an embedding has {} dimensions, expected {expected}{}",
                            v.len(),
                            if self.configured.is_some() {
                                " (as configured)"
                            } else {
                                ""
                            }
                        ),
                    ));
                }
            }
            out.extend(vectors);
        }
        Ok(out)
    }
}

impl Embed for Remote {
    fn embed(&self, texts: &[&str]) -> Result<Vec<Embedding>> {
        if let Shape::Rest {
            placeholder: FRAGMENT,
            ..
        } = self.shape
        {
            // An embedder with fragments embeds rendered fragments only (a query's text goes
            // through its search fragments, see `embedders::fragment`).
            return Err(error(
                &self.name,
                "this embedder has fragments: texts are embedded through its search fragments",
            ));
        }
        let inputs: Vec<Value> = texts.iter().map(|t| json!(t)).collect();
        self.embed_inputs(&inputs)
    }

    fn embed_fragments(&self, fragments: &[Value]) -> Result<Vec<Embedding>> {
        self.embed_inputs(fragments)
    }

    fn dimensions(&self) -> usize {
        self.dimensions.load(Ordering::Relaxed)
    }

    fn batch_size(&self) -> usize {
        self.batch()
    }
}

fn has_repeat(v: &Value) -> bool {
    match v {
        Value::Array(a) => {
            a.get(1).and_then(Value::as_str) == Some(REPEAT) || a.iter().any(has_repeat)
        }
        Value::Object(o) => o.values().any(has_repeat),
        _ => false,
    }
}

/// The request template with `inputs` in place of `placeholder` (`{{text}}`, or `{{fragment}}`
/// for an embedder with fragments): a string that is the placeholder becomes the input
/// (a rendered fragment may be any JSON value); a longer string gets the input's text.
fn fill(template: &Value, inputs: &[Value], placeholder: &str) -> Value {
    match template {
        Value::String(s) if s == placeholder => inputs.first().cloned().unwrap_or(json!("")),
        Value::String(s) if s.contains(placeholder) => {
            let text = match inputs.first() {
                Some(Value::String(t)) => t.clone(),
                Some(other) => other.to_string(),
                None => String::new(),
            };
            Value::String(s.replace(placeholder, &text))
        }
        Value::Array(a) if a.get(1).and_then(Value::as_str) == Some(REPEAT) => Value::Array(
            inputs
                .iter()
                .map(|t| fill(&a[0], std::slice::from_ref(t), placeholder))
                .collect(),
        ),
        Value::Array(a) => Value::Array(a.iter().map(|v| fill(v, inputs, placeholder)).collect()),
        Value::Object(o) => Value::Object(
            o.iter()
                .map(|(k, v)| (k.clone(), fill(v, inputs, placeholder)))
                .collect::<Map<String, Value>>(),
        ),
        other => other.clone(),
    }
}

/// The embeddings found in `answer` where the response template marks them.
fn extract(
    template: &Value,
    answer: &Value,
    out: &mut Vec<Embedding>,
) -> std::result::Result<(), String> {
    match template {
        Value::String(s) if s == EMBEDDING => {
            out.push(floats(answer, "{{embedding}}")?);
            Ok(())
        }
        Value::Array(t) if t.get(1).and_then(Value::as_str) == Some(REPEAT) => {
            let items = answer
                .as_array()
                .ok_or("expected an array where the template repeats `{{..}}`")?;
            for item in items {
                extract(&t[0], item, out)?;
            }
            Ok(())
        }
        Value::Array(t) => {
            let items = answer.as_array().ok_or("expected an array")?;
            for (tv, av) in t.iter().zip(items) {
                extract(tv, av, out)?;
            }
            Ok(())
        }
        Value::Object(t) => {
            for (k, tv) in t {
                if contains_embedding(tv) {
                    let av = answer
                        .get(k)
                        .ok_or_else(|| format!("missing field `{k}`"))?;
                    extract(tv, av, out)?;
                }
            }
            Ok(())
        }
        _ => Ok(()),
    }
}

fn contains_embedding(v: &Value) -> bool {
    match v {
        Value::String(s) => s == EMBEDDING,
        Value::Array(a) => a.iter().any(contains_embedding),
        Value::Object(o) => o.values().any(contains_embedding),
        _ => false,
    }
}

fn floats(v: &Value, what: &str) -> std::result::Result<Embedding, String> {
    let items = v
        .as_array()
        .ok_or_else(|| format!("`{what}` is not an array of numbers"))?;
    items
        .iter()
        .map(|x| {
            x.as_f64()
                .map(|f| f as f32)
                .ok_or_else(|| format!("`{what}` holds a value that is not a number"))
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn templates() {
        let req = json!({"model": "m", "input": ["{{text}}", "{{..}}"]});
        assert!(has_repeat(&req));
        assert_eq!(
            fill(&req, &[json!("a"), json!("b")], TEXT),
            json!({"model": "m", "input": ["a", "b"]})
        );
        let single = json!({"prompt": "say {{text}}"});
        assert!(!has_repeat(&single));
        assert_eq!(
            fill(&single, &[json!("x")], TEXT),
            json!({"prompt": "say x"})
        );
        let fragment = json!({"input": ["{{fragment}}", "{{..}}"]});
        assert_eq!(
            fill(
                &fragment,
                &[json!({"image": "a.png"}), json!("b")],
                FRAGMENT
            ),
            json!({"input": [{"image": "a.png"}, "b"]})
        );
        let resp = json!({"data": [{"embedding": "{{embedding}}"}, "{{..}}"]});
        let mut out = Vec::new();
        extract(
            &resp,
            &json!({"data": [{"embedding": [1, 2]}, {"embedding": [3, 4]}], "x": 1}),
            &mut out,
        )
        .unwrap();
        assert_eq!(out, vec![vec![1.0, 2.0], vec![3.0, 4.0]]);
        let mut out = Vec::new();
        assert!(extract(&json!({"e": "{{embedding}}"}), &json!({"f": [1]}), &mut out).is_err());
    }
}
