//! One component per file.

pub mod approval_card;
pub mod chat_export;
pub mod chat_list;
pub mod composer;
pub mod conversation;
pub mod copy_button;
pub mod credentials_form;
pub mod file_chip;
pub mod file_preview;
pub mod follow;
pub mod library_layout;
pub mod live_tail;
pub mod made_files;
pub mod markdown;
pub mod message_view;
pub mod page_assistant;
pub mod run_again;
pub mod run_detail;
pub mod run_images;
pub mod sandbox_status;
pub mod shared_files;
pub mod step_input;
pub mod tool_step;
pub mod workspace_files;
