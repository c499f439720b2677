//! One file per page.

pub mod chat_page;
pub mod document_page;
pub mod library_page;
pub mod login_page;
pub mod namespace_page;
pub mod sandbox_settings;
pub mod settings_page;
pub mod setup_page;
pub mod storage_settings;
