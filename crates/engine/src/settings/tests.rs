//! Applying updates and the settings view, case by case (Meilisearch 1.50's behaviour).

use api_types::Code;
use serde_json::{json, Value};

use super::*;

/// The default settings view of the JS client's snapshot, plus the experimental fields.
fn default_view() -> Value {
    json!({
        "displayedAttributes": ["*"],
        "searchableAttributes": ["*"],
        "filterableAttributes": [],
        "sortableAttributes": [],
        "foreignKeys": [],
        "rankingRules": ["words", "typo", "proximity", "attributeRank", "sort", "wordPosition", "exactness"],
        "stopWords": [],
        "nonSeparatorTokens": [],
        "separatorTokens": [],
        "dictionary": [],
        "synonyms": {},
        "distinctAttribute": null,
        "proximityPrecision": "byWord",
        "typoTolerance": {
            "enabled": true,
            "minWordSizeForTypos": { "oneTypo": 5, "twoTypos": 9 },
            "disableOnWords": [],
            "disableOnAttributes": [],
            "disableOnNumbers": false
        },
        "faceting": { "maxValuesPerFacet": 100, "sortFacetValuesBy": { "*": "alpha" } },
        "pagination": { "maxTotalHits": 1000 },
        "embedders": {},
        "searchCutoffMs": null,
        "localizedAttributes": null,
        "facetSearch": true,
        "prefixSearch": "indexingTime",
        "chat": {
            "description": "",
            "documentTemplate": DEFAULT_DOCUMENT_TEMPLATE,
            "documentTemplateMaxBytes": 400,
            "searchParameters": {}
        }
    })
}

/// `default_view()` with `changes` merged over its top-level fields.
fn view_with(changes: Value) -> Value {
    let mut v = default_view();
    for (k, x) in changes.as_object().unwrap() {
        v[k] = x.clone();
    }
    v
}

/// Applies `body` (a validated request) on top of `base`.
fn update(body: Value, base: &Settings) -> Result<Settings, crate::Error> {
    let mut next = base.clone();
    next.apply(SettingsPatch::from_json(&body)?)?;
    Ok(next)
}

fn updated(body: Value, base: &Settings) -> Settings {
    update(body, base).unwrap()
}

fn keys(v: &Value) -> Vec<&str> {
    v.as_object().unwrap().keys().map(String::as_str).collect()
}

#[test]
fn test_default_view_is_meilisearch_defaults_in_order() {
    let view = Settings::default().view();
    assert_eq!(view, default_view());
    assert_eq!(keys(&view), SETTINGS_FIELDS.to_vec());
    assert_eq!(
        keys(&view["typoTolerance"]),
        keys(&default_view()["typoTolerance"])
    );
    assert_eq!(Settings::from_stored(None), Settings::default());
}

#[test]
fn test_stored_object_lacking_newer_fields_takes_defaults() {
    let partial = json!({ "rankingRules": ["typo"], "typoTolerance": { "minWordSizeForTypos": { "oneTypo": 2 } } });
    let s = Settings::from_stored(Some(&partial));
    let mut expected = view_with(json!({ "rankingRules": ["typo"] }));
    expected["typoTolerance"]["minWordSizeForTypos"]["oneTypo"] = json!(2);
    assert_eq!(s.view(), expected);
    assert_eq!(s.view()["pagination"], json!({ "maxTotalHits": 1000 }));
}

#[test]
fn test_stored_object_of_the_current_version_reads_back_unchanged() {
    let s = updated(
        json!({ "filterableAttributes": ["a", { "attributePatterns": ["b"], "features": { "facetSearch": true, "filter": { "equality": true, "comparison": true } } }],
                "embedders": { "e": { "source": "userProvided", "dimensions": 2 } }, "searchCutoffMs": 5 }),
        &Settings::default(),
    );
    let stored = s.to_json();
    assert_eq!(Settings::from_stored(Some(&stored)), s);
    assert_eq!(keys(&stored), SETTINGS_FIELDS.to_vec());
}

#[test]
fn test_js_client_update_of_every_setting() {
    let next = updated(
        json!({
            "filterableAttributes": ["title"],
            "sortableAttributes": ["title"],
            "distinctAttribute": "title",
            "proximityPrecision": "byAttribute",
            "searchableAttributes": ["title"],
            "displayedAttributes": ["title"],
            "rankingRules": ["id:asc", "typo"],
            "stopWords": ["the"],
            "synonyms": { "harry": ["potter"] },
            "typoTolerance": {
                "enabled": false,
                "minWordSizeForTypos": { "oneTypo": 1, "twoTypos": 100 },
                "disableOnWords": ["prince"],
                "disableOnAttributes": ["comment"]
            },
            "pagination": { "maxTotalHits": 1000 },
            "faceting": { "maxValuesPerFacet": 50, "sortFacetValuesBy": { "*": "alpha" } },
            "separatorTokens": ["&sep", "/", "|"],
            "nonSeparatorTokens": ["&sep", "/", "|"],
            "dictionary": ["J. K.", "J. R. R."],
            "searchCutoffMs": 1000,
            "facetSearch": true,
            "prefixSearch": "indexingTime"
        }),
        &Settings::default(),
    );
    assert_eq!(
        next.view(),
        view_with(json!({
            "displayedAttributes": ["title"],
            "searchableAttributes": ["title"],
            "filterableAttributes": ["title"],
            "sortableAttributes": ["title"],
            "rankingRules": ["id:asc", "typo"],
            "stopWords": ["the"],
            "nonSeparatorTokens": ["&sep", "/", "|"],
            "separatorTokens": ["&sep", "/", "|"],
            "dictionary": ["J. K.", "J. R. R."],
            "synonyms": { "harry": ["potter"] },
            "distinctAttribute": "title",
            "proximityPrecision": "byAttribute",
            "typoTolerance": {
                "enabled": false,
                "minWordSizeForTypos": { "oneTypo": 1, "twoTypos": 100 },
                "disableOnWords": ["prince"],
                "disableOnAttributes": ["comment"],
                "disableOnNumbers": false
            },
            "faceting": { "maxValuesPerFacet": 50, "sortFacetValuesBy": { "*": "alpha" } },
            "searchCutoffMs": 1000
        }))
    );
}

#[test]
fn test_nulls_everywhere_reset_to_defaults() {
    let changed = updated(
        json!({
            "rankingRules": ["typo"], "stopWords": ["a"], "distinctAttribute": "id", "searchCutoffMs": 10,
            "typoTolerance": { "enabled": false, "minWordSizeForTypos": { "oneTypo": 2, "twoTypos": 3 } },
            "faceting": { "maxValuesPerFacet": 1 }, "pagination": { "maxTotalHits": 5 }
        }),
        &Settings::default(),
    );
    let reset = updated(
        json!({
            "filterableAttributes": null, "sortableAttributes": null, "distinctAttribute": null,
            "searchableAttributes": null, "displayedAttributes": null, "rankingRules": null,
            "stopWords": null, "synonyms": null,
            "typoTolerance": {
                "enabled": null, "minWordSizeForTypos": { "oneTypo": null, "twoTypos": null },
                "disableOnWords": null, "disableOnAttributes": null
            },
            "faceting": { "maxValuesPerFacet": null, "sortFacetValuesBy": null },
            "pagination": { "maxTotalHits": null },
            "separatorTokens": null, "nonSeparatorTokens": null, "dictionary": null, "searchCutoffMs": null
        }),
        &changed,
    );
    assert_eq!(reset.view(), default_view());
}

#[test]
fn test_reset_all_gives_the_defaults_and_one_reset_changes_one_field() {
    let changed = updated(
        json!({ "rankingRules": ["typo"], "stopWords": ["a"], "embedders": { "e": { "source": "userProvided", "dimensions": 2 } }, "localizedAttributes": [] }),
        &Settings::default(),
    );
    let mut all = changed.clone();
    all.apply(SettingsPatch::reset_all()).unwrap();
    assert_eq!(all, Settings::default());
    let one = updated(json!({ "stopWords": null }), &changed);
    assert!(one.stop_words.is_empty());
    assert_eq!(one.ranking_rules, vec!["typo"]);
}

#[test]
fn test_typo_tolerance_partial_patch_keeps_other_fields() {
    let mut s = updated(
        json!({ "typoTolerance": { "enabled": false, "disableOnWords": ["x"], "minWordSizeForTypos": { "oneTypo": 3, "twoTypos": 7 } } }),
        &Settings::default(),
    );
    s = updated(
        json!({ "typoTolerance": { "minWordSizeForTypos": { "oneTypo": 4 } } }),
        &s,
    );
    assert_eq!(
        s.view()["typoTolerance"],
        json!({ "enabled": false, "minWordSizeForTypos": { "oneTypo": 4, "twoTypos": 7 }, "disableOnWords": ["x"], "disableOnAttributes": [], "disableOnNumbers": false })
    );
    s = updated(
        json!({ "typoTolerance": { "minWordSizeForTypos": null } }),
        &s,
    );
    assert_eq!(
        s.typo_tolerance.min_word_size_for_typos,
        MinWordSizeForTypos::default()
    );
    assert!(!s.typo_tolerance.enabled);
    s = updated(json!({ "typoTolerance": null }), &s);
    assert_eq!(s.view()["typoTolerance"], default_view()["typoTolerance"]);
}

#[test]
fn test_faceting_merges_and_keeps_the_wildcard_entry() {
    let mut s = updated(
        json!({ "faceting": { "maxValuesPerFacet": 12, "sortFacetValuesBy": { "test": "count" } } }),
        &Settings::default(),
    );
    assert_eq!(
        s.view()["faceting"],
        json!({ "maxValuesPerFacet": 12, "sortFacetValuesBy": { "*": "alpha", "test": "count" } })
    );
    assert_eq!(
        keys(&s.view()["faceting"]["sortFacetValuesBy"]),
        vec!["*", "test"]
    );
    s = updated(json!({ "faceting": { "maxValuesPerFacet": null } }), &s);
    assert_eq!(
        s.view()["faceting"],
        json!({ "maxValuesPerFacet": 100, "sortFacetValuesBy": { "*": "alpha", "test": "count" } })
    );
    s = updated(
        json!({ "faceting": { "sortFacetValuesBy": { "b": "count", "*": "count" } } }),
        &s,
    );
    assert_eq!(
        s.view()["faceting"]["sortFacetValuesBy"],
        json!({ "*": "count", "b": "count" })
    );
    assert_eq!(s.facet_order("b"), crate::facets::FacetOrder::Count);
    assert_eq!(s.facet_order("other"), crate::facets::FacetOrder::Count);
    s = updated(json!({ "faceting": null }), &s);
    assert_eq!(s.view()["faceting"], default_view()["faceting"]);
}

#[test]
fn test_pagination_null_is_back_to_1000() {
    let s = updated(
        json!({ "pagination": { "maxTotalHits": 100 } }),
        &Settings::default(),
    );
    assert_eq!(s.max_total_hits(), 100);
    assert_eq!(
        updated(json!({ "pagination": { "maxTotalHits": null } }), &s).max_total_hits(),
        1000
    );
    assert_eq!(
        updated(json!({ "pagination": null }), &s).max_total_hits(),
        1000
    );
}

#[test]
fn test_sets_come_back_sorted_by_bytes_and_deduplicated() {
    let s = updated(
        json!({
            "stopWords": ["the", "a", "the", "Zed"],
            "sortableAttributes": ["title", "genre", "title"],
            "separatorTokens": ["|", "&sep", "/"],
            "nonSeparatorTokens": ["|", "|", "#"],
            "dictionary": ["J. R. R.", "J. K.", "J. K."],
            "typoTolerance": { "disableOnWords": ["b", "a", "b"], "disableOnAttributes": ["y", "x"] }
        }),
        &Settings::default(),
    );
    assert_eq!(s.stop_words, vec!["Zed", "a", "the"]);
    assert_eq!(s.sortable_attributes, vec!["genre", "title"]);
    assert_eq!(s.separator_tokens, vec!["&sep", "/", "|"]);
    assert_eq!(s.non_separator_tokens, vec!["#", "|"]);
    assert_eq!(s.dictionary, vec!["J. K.", "J. R. R."]);
    assert_eq!(s.typo_tolerance.disable_on_words, vec!["a", "b"]);
    assert_eq!(s.typo_tolerance.disable_on_attributes, vec!["x", "y"]);
}

#[test]
fn test_ordered_lists_keep_their_order() {
    let granular = json!({ "attributePatterns": ["genre"], "features": { "facetSearch": true, "filter": { "equality": true, "comparison": false } } });
    let s = updated(
        json!({
            "displayedAttributes": ["title", "id", "title"],
            "searchableAttributes": ["b", "a"],
            "filterableAttributes": ["author", granular, "author"],
            "synonyms": { "wolverine": ["logan", "xmen"], "hp": ["harry potter"] },
            "rankingRules": ["typo", "words", "typo"]
        }),
        &Settings::default(),
    );
    let v = s.view();
    assert_eq!(v["displayedAttributes"], json!(["title", "id"]));
    assert_eq!(v["searchableAttributes"], json!(["b", "a"]));
    assert_eq!(
        v["filterableAttributes"],
        json!(["author", granular, "author"])
    );
    assert_eq!(keys(&v["synonyms"]), vec!["hp", "wolverine"]);
    assert_eq!(v["synonyms"]["wolverine"], json!(["logan", "xmen"]));
    assert_eq!(v["rankingRules"], json!(["typo", "words", "typo"]));
    assert_eq!(
        s.searchable(),
        Some(&["b".to_string(), "a".to_string()][..])
    );
}

#[test]
fn test_proto_map_key_is_an_ordinary_entry() {
    let s = updated(
        json!({ "synonyms": { "__proto__": ["x"], "a": ["b"] }, "embedders": { "__proto__": { "source": "userProvided", "dimensions": 1 } } }),
        &Settings::default(),
    );
    assert_eq!(keys(&s.view()["synonyms"]), vec!["__proto__", "a"]);
    assert_eq!(
        s.view()["embedders"].to_string(),
        r#"{"__proto__":{"source":"userProvided","dimensions":1}}"#
    );
}

#[test]
fn test_wildcard_in_displayed_or_searchable_means_all() {
    let s = updated(
        json!({ "displayedAttributes": ["title", "*"], "searchableAttributes": ["*"] }),
        &Settings::default(),
    );
    assert_eq!(s.displayed_attributes, vec!["*"]);
    assert_eq!(s.searchable_attributes, vec!["*"]);
    assert_eq!(s.searchable(), None);
    assert_eq!(s.displayed(), None);
}

#[test]
fn test_granular_filterable_rule_features_default() {
    let s = updated(
        json!({ "filterableAttributes": [{ "attributePatterns": ["a*"] }, { "attributePatterns": ["b"], "features": { "filter": { "comparison": true } } }] }),
        &Settings::default(),
    );
    assert_eq!(
        s.view()["filterableAttributes"],
        json!([
            { "attributePatterns": ["a*"], "features": { "facetSearch": false, "filter": { "equality": true, "comparison": false } } },
            { "attributePatterns": ["b"], "features": { "facetSearch": false, "filter": { "equality": true, "comparison": true } } }
        ])
    );
}

#[test]
fn test_localized_attributes_store_three_letter_codes() {
    let s = updated(
        json!({ "localizedAttributes": [{ "attributePatterns": ["title"], "locales": ["en", "jpn", "cmn", "zh"] }] }),
        &Settings::default(),
    );
    assert_eq!(
        s.view()["localizedAttributes"],
        json!([{ "attributePatterns": ["title"], "locales": ["eng", "jpn", "cmn", "zho"] }])
    );
    assert_eq!(
        updated(json!({ "localizedAttributes": [] }), &Settings::default()).view()
            ["localizedAttributes"],
        json!([])
    );
    assert_eq!(
        updated(json!({ "localizedAttributes": null }), &s).view()["localizedAttributes"],
        Value::Null
    );
}

#[test]
fn test_one_typo_above_stored_two_typos_fails_when_applied() {
    let s = updated(
        json!({ "typoTolerance": { "minWordSizeForTypos": { "twoTypos": 6 } } }),
        &Settings::default(),
    );
    let err = update(
        json!({ "typoTolerance": { "minWordSizeForTypos": { "oneTypo": 7 } } }),
        &s,
    )
    .unwrap_err();
    assert_eq!(err.code, Code::InvalidSettingsTypoTolerance);
    assert_eq!(
        err.message,
        "`minWordSizeForTypos` setting is invalid. `oneTypo` and `twoTypos` fields should be between `0` and `255`, and `twoTypos` should be greater or equals to `oneTypo` but found `oneTypo: 7` and twoTypos: 6`."
    );
    // A failed update leaves the settings as they were.
    let mut same = s.clone();
    assert!(same
        .apply(SettingsPatch::from_json(&json!({ "stopWords": ["x"], "typoTolerance": { "minWordSizeForTypos": { "oneTypo": 7 } } })).unwrap())
        .is_err());
    assert_eq!(same, s);
}

#[test]
fn test_chat_template_size_zero_fails_and_chat_merges() {
    let err = update(
        json!({ "chat": { "documentTemplateMaxBytes": 0 } }),
        &Settings::default(),
    )
    .unwrap_err();
    assert_eq!(err.code, Code::InvalidSettingsEmbedders);
    let s = updated(
        json!({ "chat": { "description": "d", "searchParameters": { "limit": 3, "hybrid": { "semanticRatio": 0.5, "embedder": "e" } } } }),
        &Settings::default(),
    );
    assert_eq!(
        keys(&s.view()["chat"]["searchParameters"]),
        vec!["hybrid", "limit"]
    );
    let s = updated(
        json!({ "chat": { "searchParameters": { "limit": null, "sort": ["a"] } } }),
        &s,
    );
    assert_eq!(
        s.view()["chat"]["searchParameters"],
        json!({ "hybrid": { "semanticRatio": 0.5, "embedder": "e" }, "sort": ["a"] })
    );
    assert_eq!(s.chat.description, "d");
    assert_eq!(
        updated(json!({ "chat": null }), &s).view()["chat"],
        default_view()["chat"]
    );
}

#[test]
fn test_embedders_merge_field_by_field_and_null_removes_one() {
    let mut s = updated(
        json!({ "embedders": {
            "manual": { "source": "userProvided", "dimensions": 3 },
            "default": { "source": "openAi", "apiKey": "sk-0123456789abcdefghijklmno", "model": "text-embedding-3-small", "dimensions": 1536 }
        } }),
        &Settings::default(),
    );
    assert_eq!(
        s.embedders.keys().collect::<Vec<_>>(),
        vec!["default", "manual"]
    );
    s = updated(
        json!({ "embedders": { "default": { "documentTemplate": "{{doc.title}}", "dimensions": null } } }),
        &s,
    );
    assert_eq!(
        Value::Object(s.embedders["default"].clone()),
        json!({ "source": "openAi", "model": "text-embedding-3-small", "apiKey": "sk-0123456789abcdefghijklmno", "documentTemplate": "{{doc.title}}" })
    );
    assert_eq!(
        keys(&Value::Object(s.embedders["default"].clone())),
        vec!["source", "model", "apiKey", "documentTemplate"]
    );
    s = updated(json!({ "embedders": { "manual": null } }), &s);
    assert_eq!(s.embedders.keys().collect::<Vec<_>>(), vec!["default"]);
    s = updated(
        json!({ "embedders": { "default": { "source": "userProvided", "dimensions": 2 } } }),
        &s,
    );
    assert_eq!(
        Value::Object(s.embedders["default"].clone()),
        json!({ "source": "userProvided", "apiKey": "sk-0123456789abcdefghijklmno", "dimensions": 2 })
    );
    assert!(updated(json!({ "embedders": null }), &s)
        .embedders
        .is_empty());
}

#[test]
fn test_api_keys_are_masked_in_the_view_only() {
    assert_eq!(hide_secret("<your-OpenAI-API-key>"), "<yoXXXXX...");
    assert_eq!(hide_secret("short"), "XXX...");
    assert_eq!(hide_secret("0123456789abc"), "01XXXX...");
    assert_eq!(
        hide_secret("0123456789012345678901234567890123"),
        "01234XXXXXX..."
    );
    assert_eq!(hide_secret("éééééééééé"), "ééXXXXX...");
    let s = updated(
        json!({ "embedders": { "default": { "source": "openAi", "apiKey": "<your-OpenAI-API-key>", "model": "text-embedding-3-small" } } }),
        &Settings::default(),
    );
    assert_eq!(
        s.view()["embedders"],
        json!({ "default": {
            "source": "openAi", "model": "text-embedding-3-small", "apiKey": "<yoXXXXX...",
            "documentTemplate": DEFAULT_DOCUMENT_TEMPLATE, "documentTemplateMaxBytes": 400
        } })
    );
    assert_eq!(
        s.embedders["default"]["apiKey"],
        json!("<your-OpenAI-API-key>")
    );
    let hf = updated(
        json!({ "embedders": { "h": { "source": "huggingFace" } } }),
        &Settings::default(),
    );
    assert_eq!(hf.view()["embedders"]["h"]["pooling"], json!("useModel"));
}

#[test]
fn test_accessors_read_like_the_engine_helpers() {
    let d = Settings::default();
    assert_eq!(d.ranking_rules(), DEFAULT_RANKING_RULES.map(String::from));
    assert_eq!(d.max_values_per_facet(), 100);
    assert_eq!(d.facet_order("x"), crate::facets::FacetOrder::Alpha);
    assert_eq!(d.search_cutoff(), std::time::Duration::from_millis(1500));
    assert!(d.prefix_search());
    assert_eq!(d.typo_budget("hello"), 1);
    assert_eq!(d.typo_budget("four"), 0);
    assert_eq!(d.typo_budget("wonderful"), 2);
    let s = updated(
        json!({ "typoTolerance": { "disableOnWords": ["Hello"], "disableOnNumbers": true, "disableOnAttributes": ["t"] },
                "prefixSearch": "disabled", "searchCutoffMs": 10, "distinctAttribute": "d", "stopWords": ["a"] }),
        &d,
    );
    assert_eq!(s.typo_budget("hello"), 0);
    assert_eq!(s.typo_budget("123456"), 0);
    assert!(s.typos_disabled_on("t"));
    assert!(!s.prefix_search());
    assert_eq!(s.search_cutoff(), std::time::Duration::from_millis(10));
    assert_eq!(s.distinct_attribute(), Some("d"));
    assert_eq!(s.string_list("stopWords"), Some(&["a".to_string()][..]));
    let off = updated(json!({ "typoTolerance": { "enabled": false } }), &d);
    assert_eq!(off.typos_for_length(20), 0);
}

#[test]
fn test_numbers_past_u64_max_saturate() {
    // JavaScript sends u64::MAX as 2^64.
    let s = updated(
        json!({ "searchCutoffMs": 18446744073709552000.0, "pagination": { "maxTotalHits": 18446744073709552000.0 } }),
        &Settings::default(),
    );
    assert_eq!(s.search_cutoff_ms, Some(u64::MAX));
    assert_eq!(s.pagination.max_total_hits, u64::MAX);
    let stored = json!({ "searchCutoffMs": 18446744073709552000.0, "faceting": { "maxValuesPerFacet": 18446744073709552000.0 }, "rankingRules": ["typo"] });
    let s = Settings::from_stored(Some(&stored));
    assert_eq!(s.search_cutoff_ms, Some(u64::MAX));
    assert_eq!(s.faceting.max_values_per_facet, u64::MAX);
    assert_eq!(s.ranking_rules, vec!["typo"]);
    let sent: Value =
        serde_json::from_str(r#"{ "searchCutoffMs": 18446744073709552000 }"#).unwrap();
    assert_eq!(
        updated(sent, &Settings::default()).search_cutoff_ms,
        Some(u64::MAX)
    );
}
