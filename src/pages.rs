//! One file per page, and one per section of the settings page.

pub mod account_settings;
pub mod accounts_settings;
pub mod audit_settings;
pub mod chat_page;
pub mod document_page;
pub mod egress_log;
pub mod gateway_preflight;
pub mod groups_settings;
pub mod library_page;
pub mod login_page;
pub mod model_settings;
pub mod namespace_page;
pub mod not_found_page;
pub mod sandbox_check_list;
pub mod sandbox_place;
pub mod sandbox_settings;
pub mod settings_page;
pub mod setup_page;
pub mod sign_in_settings;
pub mod storage_settings;
pub mod tokens_settings;
pub mod usage_settings;
