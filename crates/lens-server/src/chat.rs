//! Answers: the pure loop ([`machine`]), the live event logs ([`hub`]) and the task
//! that drives one answer against a model, the tools and the store ([`runner`]).

pub mod answer_task;
pub mod approvals;
pub mod ask;
mod chats;
pub mod deletion;
pub mod endings;
pub mod fork;
pub mod history;
pub mod hub;
mod late_network;
pub mod live_run;
pub mod machine;
pub mod notebook;
pub mod person_run;
pub mod placement;
pub mod relay;
pub mod run_again;
pub mod runner;
pub mod sandbox_lease;

pub use answer_task::spawn_answer;
pub use chats::{AnswerLimits, Chats};
pub use hub::{AnswerHub, AnswerLog};
