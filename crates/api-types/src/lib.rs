//! The error table: every error code Quarry can answer with, its type and its HTTP status.
//!
//! This is the single source of error codes. The engine builds [`Error`]s from these codes,
//! the N-API binding exports [`catalog`] to the TypeScript layer, which renders every error as
//! `{message, code, type, link}` from it. Codes and statuses follow Meilisearch's table.

use std::fmt;

/// The `type` field of an error body.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ErrorType {
    InvalidRequest,
    Internal,
    Auth,
    System,
}

impl ErrorType {
    pub fn as_str(self) -> &'static str {
        match self {
            ErrorType::InvalidRequest => "invalid_request",
            ErrorType::Internal => "internal",
            ErrorType::Auth => "auth",
            ErrorType::System => "system",
        }
    }
}

/// One row of the table.
#[derive(Debug, Clone, Copy)]
pub struct CodeRow {
    pub code: &'static str,
    pub error_type: ErrorType,
    pub status: u16,
}

/// `(code, type, HTTP status)`, Meilisearch's names.
const TABLE: &[(&str, ErrorType, u16)] = &[
    ("api_key_already_exists", ErrorType::InvalidRequest, 409),
    ("api_key_not_found", ErrorType::InvalidRequest, 404),
    ("database_size_limit_reached", ErrorType::Internal, 500),
    ("document_not_found", ErrorType::InvalidRequest, 404),
    ("dump_already_processing", ErrorType::InvalidRequest, 409),
    ("dump_not_found", ErrorType::InvalidRequest, 404),
    ("dump_process_failed", ErrorType::Internal, 500),
    (
        "import_task_already_received",
        ErrorType::InvalidRequest,
        412,
    ),
    ("import_task_unknown_remote", ErrorType::InvalidRequest, 412),
    (
        "receive_import_finished_unknown_remote",
        ErrorType::InvalidRequest,
        412,
    ),
    (
        "import_task_without_network_task",
        ErrorType::InvalidRequest,
        503,
    ),
    ("index_already_exists", ErrorType::InvalidRequest, 409),
    ("index_creation_failed", ErrorType::Internal, 500),
    ("index_not_found", ErrorType::InvalidRequest, 404),
    ("internal", ErrorType::Internal, 500),
    ("invalid_api_key", ErrorType::Auth, 403),
    ("invalid_content_type", ErrorType::InvalidRequest, 415),
    ("invalid_state", ErrorType::Internal, 500),
    ("invalid_store_file", ErrorType::Internal, 500),
    ("io_error", ErrorType::System, 422),
    ("missing_authorization_header", ErrorType::Auth, 401),
    ("missing_content_type", ErrorType::InvalidRequest, 415),
    ("missing_master_key", ErrorType::Auth, 401),
    ("network_version_mismatch", ErrorType::InvalidRequest, 412),
    ("no_space_left_on_device", ErrorType::System, 422),
    ("payload_too_large", ErrorType::InvalidRequest, 413),
    ("remote_bad_response", ErrorType::System, 502),
    ("remote_could_not_send_request", ErrorType::System, 502),
    ("remote_invalid_api_key", ErrorType::Auth, 403),
    ("remote_remote_error", ErrorType::System, 502),
    ("remote_timeout", ErrorType::System, 502),
    ("too_many_search_requests", ErrorType::System, 503),
    ("task_not_found", ErrorType::InvalidRequest, 404),
    ("task_file_not_found", ErrorType::InvalidRequest, 404),
    ("batch_not_found", ErrorType::InvalidRequest, 404),
    ("too_many_open_files", ErrorType::System, 422),
    ("unretrievable_document", ErrorType::Internal, 400),
    ("unsupported_media_type", ErrorType::InvalidRequest, 415),
    ("invalid_s_3_snapshot_request", ErrorType::Internal, 400),
    ("invalid_s_3_snapshot_parameters", ErrorType::Internal, 400),
    ("s_3_snapshot_server_error", ErrorType::Internal, 502),
    (
        "unimplemented_external_function_calling",
        ErrorType::InvalidRequest,
        501,
    ),
    (
        "unimplemented_non_streaming_chat_completions",
        ErrorType::InvalidRequest,
        501,
    ),
    (
        "unimplemented_multi_choice_chat_completions",
        ErrorType::InvalidRequest,
        501,
    ),
    ("chat_not_found", ErrorType::InvalidRequest, 404),
    (
        "requires_enterprise_edition",
        ErrorType::InvalidRequest,
        451,
    ),
    ("render_document_not_found", ErrorType::InvalidRequest, 404),
    ("webhook_not_found", ErrorType::InvalidRequest, 404),
    (
        "dynamic_search_rule_not_found",
        ErrorType::InvalidRequest,
        404,
    ),
    ("bad_parameter", ErrorType::InvalidRequest, 400),
    ("bad_request", ErrorType::InvalidRequest, 400),
    ("duplicate_index_found", ErrorType::InvalidRequest, 400),
    ("malformed_payload", ErrorType::InvalidRequest, 400),
    ("missing_payload", ErrorType::InvalidRequest, 400),
    ("missing_index_uid", ErrorType::InvalidRequest, 400),
    ("missing_task_filters", ErrorType::InvalidRequest, 400),
    ("feature_not_enabled", ErrorType::InvalidRequest, 400),
    ("max_fields_limit_exceeded", ErrorType::InvalidRequest, 400),
    ("invalid_header_value", ErrorType::InvalidRequest, 400),
    (
        "inconsistent_document_change_headers",
        ErrorType::InvalidRequest,
        400,
    ),
    ("invalid_skip_creation", ErrorType::InvalidRequest, 400),
    ("unretrievable_error_code", ErrorType::InvalidRequest, 400),
    (
        "index_scoped_api_key_with_global_action",
        ErrorType::InvalidRequest,
        400,
    ),
    ("invalid_api_key_actions", ErrorType::InvalidRequest, 400),
    (
        "invalid_api_key_description",
        ErrorType::InvalidRequest,
        400,
    ),
    ("invalid_api_key_expires_at", ErrorType::InvalidRequest, 400),
    ("invalid_api_key_indexes", ErrorType::InvalidRequest, 400),
    ("invalid_api_key_limit", ErrorType::InvalidRequest, 400),
    ("invalid_api_key_name", ErrorType::InvalidRequest, 400),
    ("invalid_api_key_offset", ErrorType::InvalidRequest, 400),
    ("invalid_api_key_uid", ErrorType::InvalidRequest, 400),
    ("missing_api_key_actions", ErrorType::InvalidRequest, 400),
    ("missing_api_key_expires_at", ErrorType::InvalidRequest, 400),
    ("missing_api_key_indexes", ErrorType::InvalidRequest, 400),
    ("immutable_api_key_actions", ErrorType::InvalidRequest, 400),
    (
        "immutable_api_key_created_at",
        ErrorType::InvalidRequest,
        400,
    ),
    (
        "immutable_api_key_expires_at",
        ErrorType::InvalidRequest,
        400,
    ),
    ("immutable_api_key_indexes", ErrorType::InvalidRequest, 400),
    ("immutable_api_key_key", ErrorType::InvalidRequest, 400),
    ("immutable_api_key_uid", ErrorType::InvalidRequest, 400),
    (
        "immutable_api_key_updated_at",
        ErrorType::InvalidRequest,
        400,
    ),
    ("invalid_index_uid", ErrorType::InvalidRequest, 400),
    ("invalid_index_primary_key", ErrorType::InvalidRequest, 400),
    ("invalid_index_limit", ErrorType::InvalidRequest, 400),
    ("invalid_index_offset", ErrorType::InvalidRequest, 400),
    (
        "invalid_index_custom_metadata",
        ErrorType::InvalidRequest,
        400,
    ),
    ("immutable_index_created_at", ErrorType::InvalidRequest, 400),
    ("immutable_index_updated_at", ErrorType::InvalidRequest, 400),
    (
        "index_primary_key_already_exists",
        ErrorType::InvalidRequest,
        400,
    ),
    (
        "index_primary_key_multiple_candidates_found",
        ErrorType::InvalidRequest,
        400,
    ),
    (
        "index_primary_key_no_candidate_found",
        ErrorType::InvalidRequest,
        400,
    ),
    (
        "invalid_index_fields_filter",
        ErrorType::InvalidRequest,
        400,
    ),
    (
        "invalid_index_fields_filter_attribute_patterns",
        ErrorType::InvalidRequest,
        400,
    ),
    (
        "invalid_index_fields_filter_displayed",
        ErrorType::InvalidRequest,
        400,
    ),
    (
        "invalid_index_fields_filter_searchable",
        ErrorType::InvalidRequest,
        400,
    ),
    (
        "invalid_index_fields_filter_sortable",
        ErrorType::InvalidRequest,
        400,
    ),
    (
        "invalid_index_fields_filter_distinct",
        ErrorType::InvalidRequest,
        400,
    ),
    (
        "invalid_index_fields_filter_ranking_rule",
        ErrorType::InvalidRequest,
        400,
    ),
    (
        "invalid_index_fields_filter_filterable",
        ErrorType::InvalidRequest,
        400,
    ),
    (
        "invalid_document_csv_delimiter",
        ErrorType::InvalidRequest,
        400,
    ),
    ("invalid_document_fields", ErrorType::InvalidRequest, 400),
    (
        "invalid_document_retrieve_vectors",
        ErrorType::InvalidRequest,
        400,
    ),
    ("invalid_document_filter", ErrorType::InvalidRequest, 400),
    ("invalid_document_sort", ErrorType::InvalidRequest, 400),
    (
        "invalid_document_use_network",
        ErrorType::InvalidRequest,
        400,
    ),
    ("invalid_document_geo_field", ErrorType::InvalidRequest, 400),
    (
        "invalid_document_geojson_field",
        ErrorType::InvalidRequest,
        400,
    ),
    ("invalid_document_id", ErrorType::InvalidRequest, 400),
    ("invalid_document_ids", ErrorType::InvalidRequest, 400),
    ("invalid_document_limit", ErrorType::InvalidRequest, 400),
    ("invalid_document_offset", ErrorType::InvalidRequest, 400),
    (
        "invalid_document_edition_context",
        ErrorType::InvalidRequest,
        400,
    ),
    (
        "invalid_document_edition_function_filter",
        ErrorType::InvalidRequest,
        400,
    ),
    ("missing_document_filter", ErrorType::InvalidRequest, 400),
    (
        "missing_document_edition_function",
        ErrorType::InvalidRequest,
        400,
    ),
    ("missing_document_id", ErrorType::InvalidRequest, 400),
    (
        "edit_documents_by_function_error",
        ErrorType::InvalidRequest,
        400,
    ),
    ("invalid_vector_dimensions", ErrorType::InvalidRequest, 400),
    ("invalid_vectors_type", ErrorType::InvalidRequest, 400),
    ("too_many_vectors", ErrorType::InvalidRequest, 400),
    ("vector_embedding_error", ErrorType::InvalidRequest, 400),
    ("invalid_search_q", ErrorType::InvalidRequest, 400),
    ("invalid_search_offset", ErrorType::InvalidRequest, 400),
    ("invalid_search_limit", ErrorType::InvalidRequest, 400),
    ("invalid_search_page", ErrorType::InvalidRequest, 400),
    (
        "invalid_search_hits_per_page",
        ErrorType::InvalidRequest,
        400,
    ),
    (
        "invalid_search_attributes_to_retrieve",
        ErrorType::InvalidRequest,
        400,
    ),
    (
        "invalid_search_attributes_to_search_on",
        ErrorType::InvalidRequest,
        400,
    ),
    (
        "invalid_search_attributes_to_crop",
        ErrorType::InvalidRequest,
        400,
    ),
    (
        "invalid_search_attributes_to_highlight",
        ErrorType::InvalidRequest,
        400,
    ),
    ("invalid_search_crop_length", ErrorType::InvalidRequest, 400),
    ("invalid_search_crop_marker", ErrorType::InvalidRequest, 400),
    (
        "invalid_search_highlight_pre_tag",
        ErrorType::InvalidRequest,
        400,
    ),
    (
        "invalid_search_highlight_post_tag",
        ErrorType::InvalidRequest,
        400,
    ),
    ("invalid_search_filter", ErrorType::InvalidRequest, 400),
    ("invalid_search_sort", ErrorType::InvalidRequest, 400),
    ("invalid_search_distinct", ErrorType::InvalidRequest, 400),
    ("invalid_search_facets", ErrorType::InvalidRequest, 400),
    (
        "invalid_search_matching_strategy",
        ErrorType::InvalidRequest,
        400,
    ),
    (
        "invalid_search_show_matches_position",
        ErrorType::InvalidRequest,
        400,
    ),
    (
        "invalid_search_show_ranking_score",
        ErrorType::InvalidRequest,
        400,
    ),
    (
        "invalid_search_show_ranking_score_details",
        ErrorType::InvalidRequest,
        400,
    ),
    (
        "invalid_search_show_performance_details",
        ErrorType::InvalidRequest,
        400,
    ),
    (
        "invalid_search_ranking_score_threshold",
        ErrorType::InvalidRequest,
        400,
    ),
    (
        "invalid_search_retrieve_vectors",
        ErrorType::InvalidRequest,
        400,
    ),
    ("invalid_search_vector", ErrorType::InvalidRequest, 400),
    ("invalid_search_media", ErrorType::InvalidRequest, 400),
    (
        "invalid_search_media_and_vector",
        ErrorType::InvalidRequest,
        400,
    ),
    (
        "invalid_search_hybrid_query",
        ErrorType::InvalidRequest,
        400,
    ),
    (
        "invalid_search_semantic_ratio",
        ErrorType::InvalidRequest,
        400,
    ),
    ("invalid_search_embedder", ErrorType::InvalidRequest, 400),
    ("invalid_search_locales", ErrorType::InvalidRequest, 400),
    ("invalid_search_use_network", ErrorType::InvalidRequest, 400),
    ("invalid_search_personalize", ErrorType::InvalidRequest, 400),
    (
        "invalid_search_personalize_user_context",
        ErrorType::InvalidRequest,
        400,
    ),
    ("missing_search_hybrid", ErrorType::InvalidRequest, 400),
    ("invalid_similar_id", ErrorType::InvalidRequest, 400),
    ("not_found_similar_id", ErrorType::InvalidRequest, 400),
    ("invalid_similar_embedder", ErrorType::InvalidRequest, 400),
    (
        "invalid_similar_attributes_to_retrieve",
        ErrorType::InvalidRequest,
        400,
    ),
    (
        "invalid_similar_retrieve_vectors",
        ErrorType::InvalidRequest,
        400,
    ),
    (
        "invalid_similar_ranking_score_threshold",
        ErrorType::InvalidRequest,
        400,
    ),
    ("invalid_similar_filter", ErrorType::InvalidRequest, 400),
    ("invalid_similar_limit", ErrorType::InvalidRequest, 400),
    ("invalid_similar_offset", ErrorType::InvalidRequest, 400),
    (
        "invalid_similar_show_ranking_score",
        ErrorType::InvalidRequest,
        400,
    ),
    (
        "invalid_similar_show_ranking_score_details",
        ErrorType::InvalidRequest,
        400,
    ),
    (
        "invalid_similar_show_performance_details",
        ErrorType::InvalidRequest,
        400,
    ),
    (
        "invalid_facet_search_facet_name",
        ErrorType::InvalidRequest,
        400,
    ),
    ("invalid_facet_search_query", ErrorType::InvalidRequest, 400),
    ("invalid_facet_search_name", ErrorType::InvalidRequest, 400),
    (
        "invalid_facet_search_exhaustive_facet_count",
        ErrorType::InvalidRequest,
        400,
    ),
    (
        "missing_facet_search_facet_name",
        ErrorType::InvalidRequest,
        400,
    ),
    ("facet_search_disabled", ErrorType::InvalidRequest, 400),
    (
        "invalid_multi_search_facets",
        ErrorType::InvalidRequest,
        400,
    ),
    (
        "invalid_multi_search_facets_by_index",
        ErrorType::InvalidRequest,
        400,
    ),
    (
        "invalid_multi_search_facet_order",
        ErrorType::InvalidRequest,
        400,
    ),
    (
        "invalid_multi_search_federated",
        ErrorType::InvalidRequest,
        400,
    ),
    (
        "invalid_multi_search_federation_options",
        ErrorType::InvalidRequest,
        400,
    ),
    (
        "invalid_multi_search_max_values_per_facet",
        ErrorType::InvalidRequest,
        400,
    ),
    (
        "invalid_multi_search_merge_facets",
        ErrorType::InvalidRequest,
        400,
    ),
    (
        "invalid_multi_search_query_facets",
        ErrorType::InvalidRequest,
        400,
    ),
    (
        "invalid_multi_search_query_pagination",
        ErrorType::InvalidRequest,
        400,
    ),
    (
        "invalid_multi_search_query_personalization",
        ErrorType::InvalidRequest,
        400,
    ),
    (
        "invalid_multi_search_query_show_performance_details",
        ErrorType::InvalidRequest,
        400,
    ),
    (
        "invalid_multi_search_query_ranking_rules",
        ErrorType::InvalidRequest,
        400,
    ),
    (
        "invalid_multi_search_query_position",
        ErrorType::InvalidRequest,
        400,
    ),
    (
        "invalid_multi_search_distinct",
        ErrorType::InvalidRequest,
        400,
    ),
    (
        "invalid_multi_search_remote",
        ErrorType::InvalidRequest,
        400,
    ),
    (
        "invalid_multi_search_weight",
        ErrorType::InvalidRequest,
        400,
    ),
    (
        "invalid_settings_displayed_attributes",
        ErrorType::InvalidRequest,
        400,
    ),
    (
        "invalid_settings_distinct_attribute",
        ErrorType::InvalidRequest,
        400,
    ),
    (
        "invalid_settings_proximity_precision",
        ErrorType::InvalidRequest,
        400,
    ),
    (
        "invalid_settings_facet_search",
        ErrorType::InvalidRequest,
        400,
    ),
    (
        "invalid_settings_prefix_search",
        ErrorType::InvalidRequest,
        400,
    ),
    ("invalid_settings_faceting", ErrorType::InvalidRequest, 400),
    (
        "invalid_settings_filterable_attributes",
        ErrorType::InvalidRequest,
        400,
    ),
    (
        "invalid_settings_foreign_keys",
        ErrorType::InvalidRequest,
        400,
    ),
    (
        "invalid_settings_pagination",
        ErrorType::InvalidRequest,
        400,
    ),
    (
        "invalid_settings_search_cutoff_ms",
        ErrorType::InvalidRequest,
        400,
    ),
    ("invalid_settings_embedders", ErrorType::InvalidRequest, 400),
    (
        "invalid_settings_ranking_rules",
        ErrorType::InvalidRequest,
        400,
    ),
    (
        "invalid_settings_searchable_attributes",
        ErrorType::InvalidRequest,
        400,
    ),
    (
        "invalid_settings_sortable_attributes",
        ErrorType::InvalidRequest,
        400,
    ),
    (
        "invalid_settings_stop_words",
        ErrorType::InvalidRequest,
        400,
    ),
    (
        "invalid_settings_non_separator_tokens",
        ErrorType::InvalidRequest,
        400,
    ),
    (
        "invalid_settings_separator_tokens",
        ErrorType::InvalidRequest,
        400,
    ),
    (
        "invalid_settings_dictionary",
        ErrorType::InvalidRequest,
        400,
    ),
    ("invalid_settings_synonyms", ErrorType::InvalidRequest, 400),
    (
        "invalid_settings_typo_tolerance",
        ErrorType::InvalidRequest,
        400,
    ),
    (
        "invalid_settings_localized_attributes",
        ErrorType::InvalidRequest,
        400,
    ),
    (
        "invalid_settings_index_chat",
        ErrorType::InvalidRequest,
        400,
    ),
    (
        "invalid_task_after_enqueued_at",
        ErrorType::InvalidRequest,
        400,
    ),
    (
        "invalid_task_after_finished_at",
        ErrorType::InvalidRequest,
        400,
    ),
    (
        "invalid_task_after_started_at",
        ErrorType::InvalidRequest,
        400,
    ),
    (
        "invalid_task_before_enqueued_at",
        ErrorType::InvalidRequest,
        400,
    ),
    (
        "invalid_task_before_finished_at",
        ErrorType::InvalidRequest,
        400,
    ),
    (
        "invalid_task_before_started_at",
        ErrorType::InvalidRequest,
        400,
    ),
    ("invalid_task_canceled_by", ErrorType::InvalidRequest, 400),
    ("invalid_task_from", ErrorType::InvalidRequest, 400),
    ("invalid_task_limit", ErrorType::InvalidRequest, 400),
    ("invalid_task_reverse", ErrorType::InvalidRequest, 400),
    ("invalid_task_statuses", ErrorType::InvalidRequest, 400),
    ("invalid_task_types", ErrorType::InvalidRequest, 400),
    ("invalid_task_uids", ErrorType::InvalidRequest, 400),
    ("invalid_batch_uids", ErrorType::InvalidRequest, 400),
    (
        "invalid_stats_show_internal_database_sizes",
        ErrorType::InvalidRequest,
        400,
    ),
    ("invalid_stats_size_format", ErrorType::InvalidRequest, 400),
    (
        "invalid_swap_duplicate_index_found",
        ErrorType::InvalidRequest,
        400,
    ),
    ("invalid_swap_indexes", ErrorType::InvalidRequest, 400),
    ("invalid_swap_rename", ErrorType::InvalidRequest, 400),
    ("missing_swap_indexes", ErrorType::InvalidRequest, 400),
    ("invalid_network_leader", ErrorType::InvalidRequest, 400),
    ("invalid_network_remotes", ErrorType::InvalidRequest, 400),
    ("invalid_network_shards", ErrorType::InvalidRequest, 400),
    ("invalid_network_self", ErrorType::InvalidRequest, 400),
    (
        "invalid_network_search_api_key",
        ErrorType::InvalidRequest,
        400,
    ),
    (
        "invalid_network_write_api_key",
        ErrorType::InvalidRequest,
        400,
    ),
    ("invalid_network_url", ErrorType::InvalidRequest, 400),
    ("missing_network_url", ErrorType::InvalidRequest, 400),
    ("not_leader", ErrorType::InvalidRequest, 400),
    ("remote_bad_request", ErrorType::InvalidRequest, 400),
    ("unknown_remote", ErrorType::InvalidRequest, 400),
    (
        "unexpected_network_previous_remotes",
        ErrorType::InvalidRequest,
        400,
    ),
    ("network_version_too_old", ErrorType::InvalidRequest, 400),
    ("unprocessed_network_task", ErrorType::InvalidRequest, 400),
    ("invalid_export_url", ErrorType::InvalidRequest, 400),
    ("invalid_export_api_key", ErrorType::InvalidRequest, 400),
    (
        "invalid_export_payload_size",
        ErrorType::InvalidRequest,
        400,
    ),
    (
        "invalid_export_indexes_patterns",
        ErrorType::InvalidRequest,
        400,
    ),
    (
        "invalid_export_index_filter",
        ErrorType::InvalidRequest,
        400,
    ),
    (
        "invalid_export_index_override_settings",
        ErrorType::InvalidRequest,
        400,
    ),
    (
        "invalid_chat_setting_document_template",
        ErrorType::InvalidRequest,
        400,
    ),
    (
        "invalid_chat_completion_org_id",
        ErrorType::InvalidRequest,
        400,
    ),
    (
        "invalid_chat_completion_project_id",
        ErrorType::InvalidRequest,
        400,
    ),
    (
        "invalid_chat_completion_api_version",
        ErrorType::InvalidRequest,
        400,
    ),
    (
        "invalid_chat_completion_deployment_id",
        ErrorType::InvalidRequest,
        400,
    ),
    (
        "invalid_chat_completion_source",
        ErrorType::InvalidRequest,
        400,
    ),
    (
        "invalid_chat_completion_base_api",
        ErrorType::InvalidRequest,
        400,
    ),
    (
        "invalid_chat_completion_api_key",
        ErrorType::InvalidRequest,
        400,
    ),
    (
        "invalid_chat_completion_prompts",
        ErrorType::InvalidRequest,
        400,
    ),
    (
        "invalid_chat_completion_system_prompt",
        ErrorType::InvalidRequest,
        400,
    ),
    (
        "invalid_chat_completion_search_description_prompt",
        ErrorType::InvalidRequest,
        400,
    ),
    (
        "invalid_chat_completion_search_query_param_prompt",
        ErrorType::InvalidRequest,
        400,
    ),
    (
        "invalid_chat_completion_search_filter_param_prompt",
        ErrorType::InvalidRequest,
        400,
    ),
    (
        "invalid_chat_completion_search_index_uid_param_prompt",
        ErrorType::InvalidRequest,
        400,
    ),
    (
        "invalid_chat_completion_pre_query_prompt",
        ErrorType::InvalidRequest,
        400,
    ),
    ("invalid_render_template", ErrorType::InvalidRequest, 400),
    ("invalid_render_input", ErrorType::InvalidRequest, 400),
    ("template_parsing_error", ErrorType::InvalidRequest, 400),
    ("template_rendering_error", ErrorType::InvalidRequest, 400),
    ("invalid_webhooks", ErrorType::InvalidRequest, 400),
    ("invalid_webhook_url", ErrorType::InvalidRequest, 400),
    ("invalid_webhook_headers", ErrorType::InvalidRequest, 400),
    ("invalid_webhook_uuid", ErrorType::InvalidRequest, 400),
    ("immutable_webhook", ErrorType::InvalidRequest, 400),
    ("immutable_webhook_uuid", ErrorType::InvalidRequest, 400),
    (
        "immutable_webhook_is_editable",
        ErrorType::InvalidRequest,
        400,
    ),
    (
        "invalid_dynamic_search_rule_offset",
        ErrorType::InvalidRequest,
        400,
    ),
    (
        "invalid_dynamic_search_rule_limit",
        ErrorType::InvalidRequest,
        400,
    ),
    (
        "invalid_dynamic_search_rule_filter",
        ErrorType::InvalidRequest,
        400,
    ),
    (
        "invalid_dynamic_search_rule_description",
        ErrorType::InvalidRequest,
        400,
    ),
    (
        "invalid_dynamic_search_rule_priority",
        ErrorType::InvalidRequest,
        400,
    ),
    (
        "invalid_dynamic_search_rule_active",
        ErrorType::InvalidRequest,
        400,
    ),
    (
        "invalid_dynamic_search_rule_conditions",
        ErrorType::InvalidRequest,
        400,
    ),
    (
        "invalid_dynamic_search_rule_actions",
        ErrorType::InvalidRequest,
        400,
    ),
    (
        "invalid_dynamic_search_rule_filter_query",
        ErrorType::InvalidRequest,
        400,
    ),
    (
        "invalid_dynamic_search_rule_filter_active",
        ErrorType::InvalidRequest,
        400,
    ),
];

/// Every row of the table, in declaration order.
pub fn catalog() -> impl Iterator<Item = CodeRow> {
    TABLE.iter().map(|&(code, error_type, status)| CodeRow {
        code,
        error_type,
        status,
    })
}

/// Looks one code up.
pub fn lookup(code: &str) -> Option<CodeRow> {
    catalog().find(|r| r.code == code)
}

/// A user-facing error: a code of the table and a message for the client.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Error {
    pub code: &'static str,
    pub message: String,
}

impl Error {
    /// Builds an error. In debug builds, an unknown code panics so that typos surface in tests.
    pub fn new(code: &'static str, message: impl Into<String>) -> Self {
        debug_assert!(
            lookup(code).is_some(),
            "error code `{code}` is not in the table"
        );
        Error {
            code,
            message: message.into(),
        }
    }

    /// An internal failure (500).
    pub fn internal(message: impl fmt::Display) -> Self {
        Error::new("internal", message.to_string())
    }

    /// The error as JSON `{"code","message"}` (what the binding hands to TypeScript inside results).
    pub fn to_json(&self) -> serde_json::Value {
        serde_json::json!({ "code": self.code, "message": self.message })
    }
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.message)
    }
}

impl std::error::Error for Error {}

pub type Result<T, E = Error> = std::result::Result<T, E>;

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::HashSet;

    #[test]
    fn codes_are_unique_and_snake_case() {
        let mut seen = HashSet::new();
        for row in catalog() {
            assert!(seen.insert(row.code), "duplicate {}", row.code);
            assert!(row
                .code
                .chars()
                .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '_'));
        }
        assert_eq!(seen.len(), 288);
    }

    #[test]
    fn statuses_match_meilisearch() {
        assert_eq!(lookup("index_not_found").unwrap().status, 404);
        assert_eq!(
            lookup("invalid_api_key").unwrap().error_type,
            ErrorType::Auth
        );
        assert_eq!(lookup("payload_too_large").unwrap().status, 413);
        assert_eq!(lookup("malformed_payload").unwrap().status, 400);
        assert_eq!(lookup("too_many_search_requests").unwrap().status, 503);
        assert!(lookup("not_a_code").is_none());
    }
}
