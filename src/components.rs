//! One component per file.

pub mod chat_list;
pub mod composer;
pub mod conversation;
pub mod credentials_form;
pub mod library_layout;
pub mod markdown;
pub mod message_view;
pub mod page_assistant;
pub mod shared_files;
pub mod tool_step;
