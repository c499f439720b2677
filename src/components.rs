//! One component per file.

pub mod chat_list;
pub mod composer;
pub mod credentials_form;
pub mod markdown;
pub mod message_view;
pub mod shared_files;
pub mod tool_step;
