//! The embedders that send requests: `rest`, `openAi` and `ollama` ([`remote`]).
//!
//! The `embedders` crate builds every embedder but these; it asks the maker [`install`]
//! registers for them, so that the engine, which builds embedders through `embedders`, depends
//! on nothing that reaches the network. The binding installs them when the addon loads; every
//! request goes through the process's one outbound client (`outbound::client`), limited to the
//! networks the operator allowed.

pub mod remote;

pub use remote::{build_remote, configure};

/// Makes the remote sources buildable in this process (see `embedders::install_remote`).
pub fn install() {
    embedders::install_remote(Box::new(|name, config| {
        build_remote(name, config, &outbound::client())
    }));
}
