//! Ranking: the relevancy rules and sort keys that order keyword candidates, evaluated per
//! document from the positions tantivy stores.
//!
//! Meilisearch sorts buckets of documents rule by rule (bucket sort); each rule gives a
//! document a rank out of a maximum, the rules compared in order. Here every candidate a
//! page needs gets its ranks computed at once from its occurrences of the query's terms
//! (positions are `field << 16 | position`, see `text`), then candidates are sorted on those
//! ranks: the same total order, without a bitmap per rule. Each rule narrows, as Meilisearch's
//! sub-graphs do, the occurrences the later rules look at: after `typo` only the derivations
//! with the fewest typos count, after `attributeRank` only occurrences in the best field,
//! after `wordPosition` only the best-placed ones.
//!
//! Scores follow Meilisearch's `score_details`: a rule's rank over its maximum, rules merged
//! like digits of a mixed-radix number, so scores order documents exactly as the rules do.
//!
//! # Layout
//!
//! - [`rule`]: the [`RankingRule`] interface and [`Rule`], the registry dispatching to one
//!   module per rule: [`words`], [`typo`], [`proximity`], [`attribute_rank`],
//!   [`word_position`], [`attribute`] (legacy: the previous two as one detail),
//!   [`exactness`], [`sort`] (a `sort` entry or custom `attr:asc|desc` rule), [`vector_sort`]
//!   (semantic search: the similarity each candidate carries).
//! - [`document`]: one document's evaluation (read occurrences, keep terms, run the rules);
//!   [`reader`]: the query terms and positions → occurrences; [`verdict`]: digits packed in
//!   one integer, scores and `_rankingScoreDetails` read back.
//! - [`levels`]: level-by-level ranking with a bounded heap and the time cutoff;
//!   [`shortcuts`]: a level's best documents looked up first; [`collector`]: the documents a
//!   query matches with their internal ids; [`order`]: comparing ranked candidates;
//!   [`sort_keys`]: the sort key values; [`rules_of_settings`]: the rule list of a search.
//!
//! # Adding a rule
//!
//! A rule is one more module implementing [`RankingRule`]:
//! `digits` (how many (rank, max) digits it adds to the verdict), `rank` (push them for one
//! document, from [`document::Evaluation`]: its occurrences, kept terms, and whatever the
//! rule adds to [`document::Context`], such as per-document similarities), `detail` (its
//! `_rankingScoreDetails` entry from its digits). It is registered in [`rule`]: a [`Rule`]
//! variant, its line in `dispatch!`, its name in [`Rule::relevancy`]. [`verdict`] holds 8
//! digits of 16 bits; today's rules use at most 7.
//!
//! # Why an enum, not trait objects
//!
//! Rules run for every candidate of every level, up to hundreds of thousands per search.
//! [`Rule`] dispatches with a `match` on a `Copy` enum, so each call is static and inlined
//! into the per-document loop, as the single `match` of the former one-file ranking was;
//! boxed rules would add an indirect call per rule per candidate. The trait still fixes what
//! each module must provide, and the `match` is the one list of rules.

mod attribute;
mod attribute_rank;
mod collector;
mod dispatch;
mod document;
mod exactness;
mod levels;
mod order;
mod proximity;
mod reader;
mod rule;
mod rules_of_settings;
mod shortcut_plan;
mod shortcuts;
mod sort;
mod sort_keys;
mod typo;
mod vector_sort;
mod verdict;
mod word_position;
mod words;

pub(super) use collector::Allowed;
pub(super) use levels::Ranking;
pub(super) use order::{compare_ranked, steps, Ranked, Step};
pub(super) use reader::{Derivation, QueryTerm};
pub(super) use rule::Rule;
pub(super) use rules_of_settings::{rule_list, semantic_rule_list};
pub(super) use verdict::{rule_runs, score_details, Run};
