//! The engine sends no request: nothing it depends on, directly or not, is an HTTP client.
//! Remote federation asks through the caller's `Peers`, remote embedders are installed by the
//! binding (`remote-embedders`), and the outbound client lives outside.

use std::process::Command;

/// Crates that send requests; none may be below the engine.
const SENDERS: [&str; 6] = [
    "outbound",
    "remote-embedders",
    "ureq",
    "reqwest",
    "hyper",
    "hf-hub",
];

#[test]
fn no_dependency_of_the_engine_sends_requests() {
    let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".into());
    let out = Command::new(cargo)
        .args(["tree", "-p", "engine", "-e", "normal", "--prefix", "none"])
        .args(["--format", "{p}", "--offline"])
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .output()
        .expect("cargo tree runs");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let tree = String::from_utf8_lossy(&out.stdout);
    let names: Vec<&str> = tree
        .lines()
        .filter_map(|l| l.split_whitespace().next())
        .collect();
    // Guards the listing itself: the engine's own dependencies are in it.
    assert!(
        names.contains(&"embedders") && names.contains(&"tantivy"),
        "{tree}"
    );
    let found: Vec<&&str> = SENDERS.iter().filter(|s| names.contains(s)).collect();
    assert!(found.is_empty(), "the engine depends on {found:?}");
}
