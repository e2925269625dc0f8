//! The table itself: one row per error code, `Variant = "code", type, HTTP status;`.
//!
//! Data only, kept in one place so that a new code is one line here. The rows become the
//! [`Code`] enum (so a misspelled code does not compile) and are read through
//! [`crate::catalog`] and [`crate::lookup`]. A variant is the code in CamelCase, which a test
//! checks.

use crate::ErrorType;

/// Declares [`Code`] from the rows, with each row's code, type and status.
macro_rules! table {
    ($($variant:ident = $code:literal, $kind:ident, $status:literal;)*) => {
        /// An error code of the table, Meilisearch's names.
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
        pub enum Code {
            $($variant,)*
        }

        impl Code {
            /// Every code, in the table's order.
            pub const ALL: &'static [Code] = &[$(Code::$variant,)*];

            /// The code as clients see it (`index_not_found`).
            pub const fn as_str(self) -> &'static str {
                match self {
                    $(Code::$variant => $code,)*
                }
            }

            /// The `type` of the error body.
            pub const fn error_type(self) -> ErrorType {
                match self {
                    $(Code::$variant => ErrorType::$kind,)*
                }
            }

            /// The HTTP status answered with.
            pub const fn status(self) -> u16 {
                match self {
                    $(Code::$variant => $status,)*
                }
            }
        }
    };
}

table! {
    ApiKeyAlreadyExists = "api_key_already_exists", InvalidRequest, 409;
    ApiKeyNotFound = "api_key_not_found", InvalidRequest, 404;
    DatabaseSizeLimitReached = "database_size_limit_reached", Internal, 500;
    DocumentNotFound = "document_not_found", InvalidRequest, 404;
    DumpAlreadyProcessing = "dump_already_processing", InvalidRequest, 409;
    DumpNotFound = "dump_not_found", InvalidRequest, 404;
    DumpProcessFailed = "dump_process_failed", Internal, 500;
    ImportTaskAlreadyReceived = "import_task_already_received", InvalidRequest, 412;
    ImportTaskUnknownRemote = "import_task_unknown_remote", InvalidRequest, 412;
    ReceiveImportFinishedUnknownRemote = "receive_import_finished_unknown_remote", InvalidRequest, 412;
    ImportTaskWithoutNetworkTask = "import_task_without_network_task", InvalidRequest, 503;
    IndexAlreadyExists = "index_already_exists", InvalidRequest, 409;
    IndexCreationFailed = "index_creation_failed", Internal, 500;
    IndexNotFound = "index_not_found", InvalidRequest, 404;
    Internal = "internal", Internal, 500;
    InvalidApiKey = "invalid_api_key", Auth, 403;
    InvalidContentType = "invalid_content_type", InvalidRequest, 415;
    InvalidState = "invalid_state", Internal, 500;
    InvalidStoreFile = "invalid_store_file", Internal, 500;
    IoError = "io_error", System, 422;
    MissingAuthorizationHeader = "missing_authorization_header", Auth, 401;
    MissingContentType = "missing_content_type", InvalidRequest, 415;
    MissingMasterKey = "missing_master_key", Auth, 401;
    NetworkVersionMismatch = "network_version_mismatch", InvalidRequest, 412;
    NoSpaceLeftOnDevice = "no_space_left_on_device", System, 422;
    PayloadTooLarge = "payload_too_large", InvalidRequest, 413;
    ProxyCouldNotSendRequest = "proxy_could_not_send_request", System, 502;
    RemoteBadResponse = "remote_bad_response", System, 502;
    RemoteCouldNotSendRequest = "remote_could_not_send_request", System, 502;
    RemoteInvalidApiKey = "remote_invalid_api_key", Auth, 403;
    RemoteRemoteError = "remote_remote_error", System, 502;
    RemoteTimeout = "remote_timeout", System, 502;
    TooManySearchRequests = "too_many_search_requests", System, 503;
    // Quarry's own: the replicated task log (NATS JetStream) could not take a write.
    ReplicationUnavailable = "replication_unavailable", System, 503;
    // Quarry's own: what a replicated group cannot do yet (each instance would do it).
    UnimplementedInReplicatedGroup = "unimplemented_in_replicated_group", InvalidRequest, 501;
    // Quarry's own: a write through a data directory opened read-only (`Quarry.open(dir, { readOnly: true })`).
    ReadOnlyInstance = "read_only_instance", InvalidRequest, 405;
    TaskNotFound = "task_not_found", InvalidRequest, 404;
    TaskFileNotFound = "task_file_not_found", InvalidRequest, 404;
    BatchNotFound = "batch_not_found", InvalidRequest, 404;
    TooManyOpenFiles = "too_many_open_files", System, 422;
    UnretrievableDocument = "unretrievable_document", Internal, 400;
    UnsupportedMediaType = "unsupported_media_type", InvalidRequest, 415;
    InvalidS3SnapshotRequest = "invalid_s_3_snapshot_request", Internal, 400;
    InvalidS3SnapshotParameters = "invalid_s_3_snapshot_parameters", Internal, 400;
    S3SnapshotServerError = "s_3_snapshot_server_error", Internal, 502;
    UnimplementedExternalFunctionCalling = "unimplemented_external_function_calling", InvalidRequest, 501;
    UnimplementedNonStreamingChatCompletions = "unimplemented_non_streaming_chat_completions", InvalidRequest, 501;
    UnimplementedMultiChoiceChatCompletions = "unimplemented_multi_choice_chat_completions", InvalidRequest, 501;
    ChatNotFound = "chat_not_found", InvalidRequest, 404;
    RequiresEnterpriseEdition = "requires_enterprise_edition", InvalidRequest, 451;
    RenderDocumentNotFound = "render_document_not_found", InvalidRequest, 404;
    WebhookNotFound = "webhook_not_found", InvalidRequest, 404;
    DynamicSearchRuleNotFound = "dynamic_search_rule_not_found", InvalidRequest, 404;
    BadParameter = "bad_parameter", InvalidRequest, 400;
    BadRequest = "bad_request", InvalidRequest, 400;
    DuplicateIndexFound = "duplicate_index_found", InvalidRequest, 400;
    MalformedPayload = "malformed_payload", InvalidRequest, 400;
    MissingPayload = "missing_payload", InvalidRequest, 400;
    MissingIndexUid = "missing_index_uid", InvalidRequest, 400;
    MissingTaskFilters = "missing_task_filters", InvalidRequest, 400;
    FeatureNotEnabled = "feature_not_enabled", InvalidRequest, 400;
    MaxFieldsLimitExceeded = "max_fields_limit_exceeded", InvalidRequest, 400;
    InvalidHeaderValue = "invalid_header_value", InvalidRequest, 400;
    InconsistentDocumentChangeHeaders = "inconsistent_document_change_headers", InvalidRequest, 400;
    InvalidSkipCreation = "invalid_skip_creation", InvalidRequest, 400;
    UnretrievableErrorCode = "unretrievable_error_code", InvalidRequest, 400;
    IndexScopedApiKeyWithGlobalAction = "index_scoped_api_key_with_global_action", InvalidRequest, 400;
    InvalidApiKeyActions = "invalid_api_key_actions", InvalidRequest, 400;
    InvalidApiKeyDescription = "invalid_api_key_description", InvalidRequest, 400;
    InvalidApiKeyExpiresAt = "invalid_api_key_expires_at", InvalidRequest, 400;
    InvalidApiKeyIndexes = "invalid_api_key_indexes", InvalidRequest, 400;
    InvalidApiKeyLimit = "invalid_api_key_limit", InvalidRequest, 400;
    InvalidApiKeyName = "invalid_api_key_name", InvalidRequest, 400;
    InvalidApiKeyOffset = "invalid_api_key_offset", InvalidRequest, 400;
    InvalidApiKeyUid = "invalid_api_key_uid", InvalidRequest, 400;
    MissingApiKeyActions = "missing_api_key_actions", InvalidRequest, 400;
    MissingApiKeyExpiresAt = "missing_api_key_expires_at", InvalidRequest, 400;
    MissingApiKeyIndexes = "missing_api_key_indexes", InvalidRequest, 400;
    ImmutableApiKeyActions = "immutable_api_key_actions", InvalidRequest, 400;
    ImmutableApiKeyCreatedAt = "immutable_api_key_created_at", InvalidRequest, 400;
    ImmutableApiKeyExpiresAt = "immutable_api_key_expires_at", InvalidRequest, 400;
    ImmutableApiKeyIndexes = "immutable_api_key_indexes", InvalidRequest, 400;
    ImmutableApiKeyKey = "immutable_api_key_key", InvalidRequest, 400;
    ImmutableApiKeyUid = "immutable_api_key_uid", InvalidRequest, 400;
    ImmutableApiKeyUpdatedAt = "immutable_api_key_updated_at", InvalidRequest, 400;
    InvalidIndexUid = "invalid_index_uid", InvalidRequest, 400;
    InvalidIndexPrimaryKey = "invalid_index_primary_key", InvalidRequest, 400;
    InvalidIndexLimit = "invalid_index_limit", InvalidRequest, 400;
    InvalidIndexOffset = "invalid_index_offset", InvalidRequest, 400;
    InvalidIndexCustomMetadata = "invalid_index_custom_metadata", InvalidRequest, 400;
    ImmutableIndexCreatedAt = "immutable_index_created_at", InvalidRequest, 400;
    ImmutableIndexUpdatedAt = "immutable_index_updated_at", InvalidRequest, 400;
    IndexPrimaryKeyAlreadyExists = "index_primary_key_already_exists", InvalidRequest, 400;
    IndexPrimaryKeyMultipleCandidatesFound = "index_primary_key_multiple_candidates_found", InvalidRequest, 400;
    IndexPrimaryKeyNoCandidateFound = "index_primary_key_no_candidate_found", InvalidRequest, 400;
    InvalidIndexFieldsFilter = "invalid_index_fields_filter", InvalidRequest, 400;
    InvalidIndexFieldsFilterAttributePatterns = "invalid_index_fields_filter_attribute_patterns", InvalidRequest, 400;
    InvalidIndexFieldsFilterDisplayed = "invalid_index_fields_filter_displayed", InvalidRequest, 400;
    InvalidIndexFieldsFilterSearchable = "invalid_index_fields_filter_searchable", InvalidRequest, 400;
    InvalidIndexFieldsFilterSortable = "invalid_index_fields_filter_sortable", InvalidRequest, 400;
    InvalidIndexFieldsFilterDistinct = "invalid_index_fields_filter_distinct", InvalidRequest, 400;
    InvalidIndexFieldsFilterRankingRule = "invalid_index_fields_filter_ranking_rule", InvalidRequest, 400;
    InvalidIndexFieldsFilterFilterable = "invalid_index_fields_filter_filterable", InvalidRequest, 400;
    InvalidDocumentCsvDelimiter = "invalid_document_csv_delimiter", InvalidRequest, 400;
    InvalidDocumentFields = "invalid_document_fields", InvalidRequest, 400;
    InvalidDocumentRetrieveVectors = "invalid_document_retrieve_vectors", InvalidRequest, 400;
    InvalidDocumentFilter = "invalid_document_filter", InvalidRequest, 400;
    InvalidDocumentSort = "invalid_document_sort", InvalidRequest, 400;
    InvalidDocumentUseNetwork = "invalid_document_use_network", InvalidRequest, 400;
    InvalidDocumentGeoField = "invalid_document_geo_field", InvalidRequest, 400;
    InvalidDocumentGeojsonField = "invalid_document_geojson_field", InvalidRequest, 400;
    InvalidDocumentId = "invalid_document_id", InvalidRequest, 400;
    InvalidDocumentIds = "invalid_document_ids", InvalidRequest, 400;
    InvalidDocumentLimit = "invalid_document_limit", InvalidRequest, 400;
    InvalidDocumentOffset = "invalid_document_offset", InvalidRequest, 400;
    InvalidDocumentEditionContext = "invalid_document_edition_context", InvalidRequest, 400;
    InvalidDocumentEditionFunctionFilter = "invalid_document_edition_function_filter", InvalidRequest, 400;
    MissingDocumentFilter = "missing_document_filter", InvalidRequest, 400;
    MissingDocumentEditionFunction = "missing_document_edition_function", InvalidRequest, 400;
    MissingDocumentId = "missing_document_id", InvalidRequest, 400;
    EditDocumentsByFunctionError = "edit_documents_by_function_error", InvalidRequest, 400;
    InvalidVectorDimensions = "invalid_vector_dimensions", InvalidRequest, 400;
    InvalidVectorsType = "invalid_vectors_type", InvalidRequest, 400;
    TooManyVectors = "too_many_vectors", InvalidRequest, 400;
    VectorEmbeddingError = "vector_embedding_error", InvalidRequest, 400;
    InvalidSearchQ = "invalid_search_q", InvalidRequest, 400;
    InvalidSearchOffset = "invalid_search_offset", InvalidRequest, 400;
    InvalidSearchLimit = "invalid_search_limit", InvalidRequest, 400;
    InvalidSearchPage = "invalid_search_page", InvalidRequest, 400;
    InvalidSearchHitsPerPage = "invalid_search_hits_per_page", InvalidRequest, 400;
    InvalidSearchAttributesToRetrieve = "invalid_search_attributes_to_retrieve", InvalidRequest, 400;
    InvalidSearchAttributesToSearchOn = "invalid_search_attributes_to_search_on", InvalidRequest, 400;
    InvalidSearchAttributesToCrop = "invalid_search_attributes_to_crop", InvalidRequest, 400;
    InvalidSearchAttributesToHighlight = "invalid_search_attributes_to_highlight", InvalidRequest, 400;
    InvalidSearchCropLength = "invalid_search_crop_length", InvalidRequest, 400;
    InvalidSearchCropMarker = "invalid_search_crop_marker", InvalidRequest, 400;
    InvalidSearchHighlightPreTag = "invalid_search_highlight_pre_tag", InvalidRequest, 400;
    InvalidSearchHighlightPostTag = "invalid_search_highlight_post_tag", InvalidRequest, 400;
    InvalidSearchFilter = "invalid_search_filter", InvalidRequest, 400;
    InvalidSearchSort = "invalid_search_sort", InvalidRequest, 400;
    InvalidSearchDistinct = "invalid_search_distinct", InvalidRequest, 400;
    InvalidSearchFacets = "invalid_search_facets", InvalidRequest, 400;
    InvalidSearchMatchingStrategy = "invalid_search_matching_strategy", InvalidRequest, 400;
    InvalidSearchShowMatchesPosition = "invalid_search_show_matches_position", InvalidRequest, 400;
    InvalidSearchShowRankingScore = "invalid_search_show_ranking_score", InvalidRequest, 400;
    InvalidSearchShowRankingScoreDetails = "invalid_search_show_ranking_score_details", InvalidRequest, 400;
    InvalidSearchShowPerformanceDetails = "invalid_search_show_performance_details", InvalidRequest, 400;
    InvalidSearchRankingScoreThreshold = "invalid_search_ranking_score_threshold", InvalidRequest, 400;
    InvalidSearchRetrieveVectors = "invalid_search_retrieve_vectors", InvalidRequest, 400;
    InvalidSearchVector = "invalid_search_vector", InvalidRequest, 400;
    InvalidSearchMedia = "invalid_search_media", InvalidRequest, 400;
    InvalidSearchMediaAndVector = "invalid_search_media_and_vector", InvalidRequest, 400;
    InvalidSearchHybridQuery = "invalid_search_hybrid_query", InvalidRequest, 400;
    InvalidSearchSemanticRatio = "invalid_search_semantic_ratio", InvalidRequest, 400;
    InvalidSearchEmbedder = "invalid_search_embedder", InvalidRequest, 400;
    InvalidSearchLocales = "invalid_search_locales", InvalidRequest, 400;
    InvalidSearchUseNetwork = "invalid_search_use_network", InvalidRequest, 400;
    InvalidSearchPersonalize = "invalid_search_personalize", InvalidRequest, 400;
    InvalidSearchPersonalizeUserContext = "invalid_search_personalize_user_context", InvalidRequest, 400;
    MissingSearchHybrid = "missing_search_hybrid", InvalidRequest, 400;
    InvalidSimilarId = "invalid_similar_id", InvalidRequest, 400;
    NotFoundSimilarId = "not_found_similar_id", InvalidRequest, 400;
    InvalidSimilarEmbedder = "invalid_similar_embedder", InvalidRequest, 400;
    InvalidSimilarAttributesToRetrieve = "invalid_similar_attributes_to_retrieve", InvalidRequest, 400;
    InvalidSimilarRetrieveVectors = "invalid_similar_retrieve_vectors", InvalidRequest, 400;
    InvalidSimilarRankingScoreThreshold = "invalid_similar_ranking_score_threshold", InvalidRequest, 400;
    InvalidSimilarFilter = "invalid_similar_filter", InvalidRequest, 400;
    InvalidSimilarLimit = "invalid_similar_limit", InvalidRequest, 400;
    InvalidSimilarOffset = "invalid_similar_offset", InvalidRequest, 400;
    InvalidSimilarShowRankingScore = "invalid_similar_show_ranking_score", InvalidRequest, 400;
    InvalidSimilarShowRankingScoreDetails = "invalid_similar_show_ranking_score_details", InvalidRequest, 400;
    InvalidSimilarShowPerformanceDetails = "invalid_similar_show_performance_details", InvalidRequest, 400;
    InvalidFacetSearchFacetName = "invalid_facet_search_facet_name", InvalidRequest, 400;
    InvalidFacetSearchQuery = "invalid_facet_search_query", InvalidRequest, 400;
    InvalidFacetSearchName = "invalid_facet_search_name", InvalidRequest, 400;
    InvalidFacetSearchExhaustiveFacetCount = "invalid_facet_search_exhaustive_facet_count", InvalidRequest, 400;
    MissingFacetSearchFacetName = "missing_facet_search_facet_name", InvalidRequest, 400;
    FacetSearchDisabled = "facet_search_disabled", InvalidRequest, 400;
    InvalidMultiSearchFacets = "invalid_multi_search_facets", InvalidRequest, 400;
    InvalidMultiSearchFacetsByIndex = "invalid_multi_search_facets_by_index", InvalidRequest, 400;
    InvalidMultiSearchFacetOrder = "invalid_multi_search_facet_order", InvalidRequest, 400;
    InvalidMultiSearchFederated = "invalid_multi_search_federated", InvalidRequest, 400;
    InvalidMultiSearchFederationOptions = "invalid_multi_search_federation_options", InvalidRequest, 400;
    InvalidMultiSearchMaxValuesPerFacet = "invalid_multi_search_max_values_per_facet", InvalidRequest, 400;
    InvalidMultiSearchMergeFacets = "invalid_multi_search_merge_facets", InvalidRequest, 400;
    InvalidMultiSearchQueryFacets = "invalid_multi_search_query_facets", InvalidRequest, 400;
    InvalidMultiSearchQueryPagination = "invalid_multi_search_query_pagination", InvalidRequest, 400;
    InvalidMultiSearchQueryPersonalization = "invalid_multi_search_query_personalization", InvalidRequest, 400;
    InvalidMultiSearchQueryShowPerformanceDetails = "invalid_multi_search_query_show_performance_details", InvalidRequest, 400;
    InvalidMultiSearchQueryRankingRules = "invalid_multi_search_query_ranking_rules", InvalidRequest, 400;
    InvalidMultiSearchQueryPosition = "invalid_multi_search_query_position", InvalidRequest, 400;
    InvalidMultiSearchDistinct = "invalid_multi_search_distinct", InvalidRequest, 400;
    InvalidMultiSearchRemote = "invalid_multi_search_remote", InvalidRequest, 400;
    InvalidMultiSearchWeight = "invalid_multi_search_weight", InvalidRequest, 400;
    InvalidSettingsDisplayedAttributes = "invalid_settings_displayed_attributes", InvalidRequest, 400;
    InvalidSettingsDistinctAttribute = "invalid_settings_distinct_attribute", InvalidRequest, 400;
    InvalidSettingsProximityPrecision = "invalid_settings_proximity_precision", InvalidRequest, 400;
    InvalidSettingsFacetSearch = "invalid_settings_facet_search", InvalidRequest, 400;
    InvalidSettingsPrefixSearch = "invalid_settings_prefix_search", InvalidRequest, 400;
    InvalidSettingsFaceting = "invalid_settings_faceting", InvalidRequest, 400;
    InvalidSettingsFilterableAttributes = "invalid_settings_filterable_attributes", InvalidRequest, 400;
    InvalidSettingsForeignKeys = "invalid_settings_foreign_keys", InvalidRequest, 400;
    InvalidSettingsPagination = "invalid_settings_pagination", InvalidRequest, 400;
    InvalidSettingsSearchCutoffMs = "invalid_settings_search_cutoff_ms", InvalidRequest, 400;
    InvalidSettingsEmbedders = "invalid_settings_embedders", InvalidRequest, 400;
    InvalidSettingsRankingRules = "invalid_settings_ranking_rules", InvalidRequest, 400;
    InvalidSettingsSearchableAttributes = "invalid_settings_searchable_attributes", InvalidRequest, 400;
    InvalidSettingsSortableAttributes = "invalid_settings_sortable_attributes", InvalidRequest, 400;
    InvalidSettingsStopWords = "invalid_settings_stop_words", InvalidRequest, 400;
    InvalidSettingsNonSeparatorTokens = "invalid_settings_non_separator_tokens", InvalidRequest, 400;
    InvalidSettingsSeparatorTokens = "invalid_settings_separator_tokens", InvalidRequest, 400;
    InvalidSettingsDictionary = "invalid_settings_dictionary", InvalidRequest, 400;
    InvalidSettingsSynonyms = "invalid_settings_synonyms", InvalidRequest, 400;
    InvalidSettingsTypoTolerance = "invalid_settings_typo_tolerance", InvalidRequest, 400;
    InvalidSettingsLocalizedAttributes = "invalid_settings_localized_attributes", InvalidRequest, 400;
    InvalidSettingsIndexChat = "invalid_settings_index_chat", InvalidRequest, 400;
    InvalidTaskAfterEnqueuedAt = "invalid_task_after_enqueued_at", InvalidRequest, 400;
    InvalidTaskAfterFinishedAt = "invalid_task_after_finished_at", InvalidRequest, 400;
    InvalidTaskAfterStartedAt = "invalid_task_after_started_at", InvalidRequest, 400;
    InvalidTaskBeforeEnqueuedAt = "invalid_task_before_enqueued_at", InvalidRequest, 400;
    InvalidTaskBeforeFinishedAt = "invalid_task_before_finished_at", InvalidRequest, 400;
    InvalidTaskBeforeStartedAt = "invalid_task_before_started_at", InvalidRequest, 400;
    InvalidTaskCanceledBy = "invalid_task_canceled_by", InvalidRequest, 400;
    InvalidTaskFrom = "invalid_task_from", InvalidRequest, 400;
    InvalidTaskLimit = "invalid_task_limit", InvalidRequest, 400;
    InvalidTaskReverse = "invalid_task_reverse", InvalidRequest, 400;
    InvalidTaskStatuses = "invalid_task_statuses", InvalidRequest, 400;
    InvalidTaskTypes = "invalid_task_types", InvalidRequest, 400;
    InvalidTaskUids = "invalid_task_uids", InvalidRequest, 400;
    InvalidBatchUids = "invalid_batch_uids", InvalidRequest, 400;
    InvalidStatsShowInternalDatabaseSizes = "invalid_stats_show_internal_database_sizes", InvalidRequest, 400;
    InvalidStatsSizeFormat = "invalid_stats_size_format", InvalidRequest, 400;
    InvalidSwapDuplicateIndexFound = "invalid_swap_duplicate_index_found", InvalidRequest, 400;
    InvalidSwapIndexes = "invalid_swap_indexes", InvalidRequest, 400;
    InvalidSwapRename = "invalid_swap_rename", InvalidRequest, 400;
    MissingSwapIndexes = "missing_swap_indexes", InvalidRequest, 400;
    InvalidNetworkLeader = "invalid_network_leader", InvalidRequest, 400;
    InvalidNetworkRemotes = "invalid_network_remotes", InvalidRequest, 400;
    InvalidNetworkShards = "invalid_network_shards", InvalidRequest, 400;
    InvalidNetworkSelf = "invalid_network_self", InvalidRequest, 400;
    InvalidNetworkSearchApiKey = "invalid_network_search_api_key", InvalidRequest, 400;
    InvalidNetworkWriteApiKey = "invalid_network_write_api_key", InvalidRequest, 400;
    InvalidNetworkUrl = "invalid_network_url", InvalidRequest, 400;
    MissingNetworkUrl = "missing_network_url", InvalidRequest, 400;
    NotLeader = "not_leader", InvalidRequest, 400;
    RemoteBadRequest = "remote_bad_request", InvalidRequest, 400;
    UnknownRemote = "unknown_remote", InvalidRequest, 400;
    UnexpectedNetworkPreviousRemotes = "unexpected_network_previous_remotes", InvalidRequest, 400;
    NetworkVersionTooOld = "network_version_too_old", InvalidRequest, 400;
    UnprocessedNetworkTask = "unprocessed_network_task", InvalidRequest, 400;
    InvalidExportUrl = "invalid_export_url", InvalidRequest, 400;
    InvalidExportApiKey = "invalid_export_api_key", InvalidRequest, 400;
    InvalidExportPayloadSize = "invalid_export_payload_size", InvalidRequest, 400;
    InvalidExportIndexesPatterns = "invalid_export_indexes_patterns", InvalidRequest, 400;
    InvalidExportIndexFilter = "invalid_export_index_filter", InvalidRequest, 400;
    InvalidExportIndexOverrideSettings = "invalid_export_index_override_settings", InvalidRequest, 400;
    InvalidChatSettingDocumentTemplate = "invalid_chat_setting_document_template", InvalidRequest, 400;
    InvalidChatCompletionOrgId = "invalid_chat_completion_org_id", InvalidRequest, 400;
    InvalidChatCompletionProjectId = "invalid_chat_completion_project_id", InvalidRequest, 400;
    InvalidChatCompletionApiVersion = "invalid_chat_completion_api_version", InvalidRequest, 400;
    InvalidChatCompletionDeploymentId = "invalid_chat_completion_deployment_id", InvalidRequest, 400;
    InvalidChatCompletionSource = "invalid_chat_completion_source", InvalidRequest, 400;
    InvalidChatCompletionBaseApi = "invalid_chat_completion_base_api", InvalidRequest, 400;
    InvalidChatCompletionApiKey = "invalid_chat_completion_api_key", InvalidRequest, 400;
    InvalidChatCompletionPrompts = "invalid_chat_completion_prompts", InvalidRequest, 400;
    InvalidChatCompletionSystemPrompt = "invalid_chat_completion_system_prompt", InvalidRequest, 400;
    InvalidChatCompletionSearchDescriptionPrompt = "invalid_chat_completion_search_description_prompt", InvalidRequest, 400;
    InvalidChatCompletionSearchQueryParamPrompt = "invalid_chat_completion_search_query_param_prompt", InvalidRequest, 400;
    InvalidChatCompletionSearchFilterParamPrompt = "invalid_chat_completion_search_filter_param_prompt", InvalidRequest, 400;
    InvalidChatCompletionSearchIndexUidParamPrompt = "invalid_chat_completion_search_index_uid_param_prompt", InvalidRequest, 400;
    InvalidChatCompletionPreQueryPrompt = "invalid_chat_completion_pre_query_prompt", InvalidRequest, 400;
    InvalidRenderTemplate = "invalid_render_template", InvalidRequest, 400;
    InvalidRenderInput = "invalid_render_input", InvalidRequest, 400;
    TemplateParsingError = "template_parsing_error", InvalidRequest, 400;
    TemplateRenderingError = "template_rendering_error", InvalidRequest, 400;
    InvalidWebhooks = "invalid_webhooks", InvalidRequest, 400;
    InvalidWebhookUrl = "invalid_webhook_url", InvalidRequest, 400;
    InvalidWebhookHeaders = "invalid_webhook_headers", InvalidRequest, 400;
    InvalidWebhookUuid = "invalid_webhook_uuid", InvalidRequest, 400;
    ImmutableWebhook = "immutable_webhook", InvalidRequest, 400;
    ImmutableWebhookUuid = "immutable_webhook_uuid", InvalidRequest, 400;
    ImmutableWebhookIsEditable = "immutable_webhook_is_editable", InvalidRequest, 400;
    InvalidDynamicSearchRuleOffset = "invalid_dynamic_search_rule_offset", InvalidRequest, 400;
    InvalidDynamicSearchRuleLimit = "invalid_dynamic_search_rule_limit", InvalidRequest, 400;
    InvalidDynamicSearchRuleFilter = "invalid_dynamic_search_rule_filter", InvalidRequest, 400;
    InvalidDynamicSearchRuleDescription = "invalid_dynamic_search_rule_description", InvalidRequest, 400;
    InvalidDynamicSearchRulePriority = "invalid_dynamic_search_rule_priority", InvalidRequest, 400;
    InvalidDynamicSearchRuleActive = "invalid_dynamic_search_rule_active", InvalidRequest, 400;
    InvalidDynamicSearchRuleConditions = "invalid_dynamic_search_rule_conditions", InvalidRequest, 400;
    InvalidDynamicSearchRuleActions = "invalid_dynamic_search_rule_actions", InvalidRequest, 400;
    InvalidDynamicSearchRuleFilterQuery = "invalid_dynamic_search_rule_filter_query", InvalidRequest, 400;
    InvalidDynamicSearchRuleFilterActive = "invalid_dynamic_search_rule_filter_active", InvalidRequest, 400;
}
