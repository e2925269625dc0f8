//! The `huggingFace` source on the real all-MiniLM-L6-v2 ONNX model fetched by
//! `scripts/fetch-model.sh` into `.cache/models/`. Without that cache the tests print why and
//! pass, unless `QUARRY_REQUIRE_MODEL=1`, which makes a missing cache a failure.

use api_types::Code;
use std::path::{Path, PathBuf};

use embedders::config::{EmbedderConfig, Pooling, Source};
use embedders::local::{build_from_env, init_runtime, model_dir};
use embedders::{build_local, Embed, LocalEmbedder};

const MODEL: &str = "sentence-transformers/all-MiniLM-L6-v2";

fn cache() -> Option<(PathBuf, PathBuf)> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../.cache/models");
    let lib = root.join("onnxruntime/libonnxruntime.so");
    let model = root.join(MODEL);
    let complete = lib.is_file()
        && [
            "model.onnx",
            "tokenizer.json",
            "config.json",
            "special_tokens_map.json",
            "tokenizer_config.json",
        ]
        .iter()
        .all(|f| model.join(f).is_file());
    if complete {
        init_runtime(Some(&lib)).unwrap();
        return Some((root, model));
    }
    let msg = format!(
        "model cache missing in {}: run `bash scripts/fetch-model.sh`",
        root.display()
    );
    if std::env::var("QUARRY_REQUIRE_MODEL").as_deref() == Ok("1") {
        panic!("QUARRY_REQUIRE_MODEL=1 but the {msg}");
    }
    eprintln!("skipping the local model test: {msg}");
    None
}

fn cosine(a: &[f32], b: &[f32]) -> f32 {
    let dot: f32 = a.iter().zip(b).map(|(x, y)| x * y).sum();
    let na: f32 = a.iter().map(|x| x * x).sum::<f32>().sqrt();
    let nb: f32 = b.iter().map(|x| x * x).sum::<f32>().sqrt();
    dot / (na * nb)
}

#[test]
fn embeds_384_normalised_dimensions_with_meaningful_similarity() {
    let Some((_, dir)) = cache() else { return };
    let e = LocalEmbedder::open(&dir, Pooling::UseModel).unwrap();
    assert_eq!(e.dimensions(), 384);
    let v = e
        .embed(&[
            "a cat sits on the mat",
            "a kitten is on the rug",
            "stock market crash",
        ])
        .unwrap();
    assert!(v.iter().all(|x| x.len() == 384));
    for x in &v {
        let norm: f32 = x.iter().map(|c| c * c).sum::<f32>().sqrt();
        assert!((norm - 1.0).abs() < 1e-3, "norm {norm}");
    }
    let close = cosine(&v[0], &v[1]);
    let far = cosine(&v[0], &v[2]);
    assert!(close > far, "cat/kitten {close} vs cat/stocks {far}");
    assert!(close > 0.5, "cat/kitten {close}");
}

#[test]
fn batch_equals_one_by_one_and_is_deterministic() {
    let Some((_, dir)) = cache() else { return };
    let e = LocalEmbedder::open(&dir, Pooling::ForceMean).unwrap();
    let texts: Vec<String> = (0..20)
        .map(|i| {
            format!(
                "document number {i} talks about {}",
                "search ".repeat(i % 5)
            )
        })
        .collect();
    let refs: Vec<&str> = texts.iter().map(String::as_str).collect();
    let batch = e.embed(&refs).unwrap();
    assert_eq!(batch.len(), 20);
    for (text, vector) in refs.iter().zip(&batch) {
        let single = e.embed(&[text]).unwrap().remove(0);
        let max_diff = single
            .iter()
            .zip(vector)
            .map(|(a, b)| (a - b).abs())
            .fold(0.0f32, f32::max);
        assert!(max_diff < 1e-4, "{text}: differs by {max_diff}");
        assert_eq!(single, e.embed(&[text]).unwrap()[0], "not deterministic");
    }
}

#[test]
fn pooling_choice_changes_vectors() {
    let Some((_, dir)) = cache() else { return };
    let mean = LocalEmbedder::open(&dir, Pooling::ForceMean).unwrap();
    let cls = LocalEmbedder::open(&dir, Pooling::ForceCls).unwrap();
    let model = LocalEmbedder::open(&dir, Pooling::UseModel).unwrap();
    let t = ["pooling differs"];
    let (m, c, u) = (
        mean.embed(&t).unwrap(),
        cls.embed(&t).unwrap(),
        model.embed(&t).unwrap(),
    );
    assert_eq!(
        m, u,
        "the model's 1_Pooling/config.json asks for mean pooling"
    );
    assert_ne!(m, c);
}

#[test]
fn build_local_resolves_models_under_the_root() {
    let Some((root, _)) = cache() else { return };
    let config = |model: Option<&str>, dimensions: Option<usize>| EmbedderConfig {
        source: Source::HuggingFace {
            model: model.map(str::to_owned),
            revision: None,
            pooling: Pooling::UseModel,
        },
        dimensions,
        document_template: None,
        document_template_max_bytes: None,
        binary_quantized: false,
        distribution: None,
    };
    let e = build_local("hf", &config(Some(MODEL), None), &root).unwrap();
    assert_eq!(e.dimensions(), 384);
    assert_eq!(e.embed(&["x"]).unwrap()[0].len(), 384);

    let err = build_local("hf", &config(None, None), &root).err().unwrap();
    assert_eq!(err.code, Code::VectorEmbeddingError);
    assert!(
        err.message.contains("BAAI/bge-base-en-v1.5"),
        "{}",
        err.message
    );
    assert!(
        err.message.contains(&root.display().to_string()),
        "{}",
        err.message
    );

    let err = build_local("hf", &config(Some(MODEL), Some(768)), &root)
        .err()
        .unwrap();
    assert_eq!(err.code, Code::VectorEmbeddingError);
    assert!(err.message.contains("768"), "{}", err.message);

    let err = build_local("hf", &config(Some("../etc"), None), &root)
        .err()
        .unwrap();
    assert!(
        err.message.contains("invalid model name"),
        "{}",
        err.message
    );
}

#[test]
fn missing_model_directory_is_a_clear_error() {
    let root = Path::new("/nonexistent-quarry-models");
    let err = model_dir(root, Some("a/b"), None).unwrap_err();
    assert_eq!(err.code, Code::VectorEmbeddingError);
    assert!(
        err.message.contains("/nonexistent-quarry-models/a/b"),
        "{}",
        err.message
    );
    let err = LocalEmbedder::open(&root.join("a/b"), Pooling::UseModel).unwrap_err();
    assert_eq!(err.code, Code::VectorEmbeddingError);
}

#[test]
fn build_reads_the_models_root_from_the_environment() {
    let Some((root, _)) = cache() else { return };
    let config = EmbedderConfig {
        source: Source::HuggingFace {
            model: Some(MODEL.to_owned()),
            revision: None,
            pooling: Pooling::UseModel,
        },
        dimensions: None,
        document_template: None,
        document_template_max_bytes: None,
        binary_quantized: false,
        distribution: None,
    };
    // The only test of this binary that touches the variable.
    std::env::set_var(embedders::local::MODELS_DIR_ENV, &root);
    let e = build_from_env("hf", &config).unwrap();
    assert_eq!(e.dimensions(), 384);
    std::env::remove_var(embedders::local::MODELS_DIR_ENV);
    let err = build_from_env("hf", &config).err().unwrap();
    assert!(err.message.contains("QUARRY_MODELS_DIR"), "{}", err.message);
}
