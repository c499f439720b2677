//! The server through real HTTP on a loopback port: a `TestApp` per test, each with its
//! own temp data directory, SQLite file and scripted model.

mod accounts;
mod answers;
mod approvals;
mod awkward_trees;
mod bad_input;
mod behind_proxy;
mod chats;
mod cli;
mod file_store;
mod files;
mod fork;
mod host_faults;
mod install;
mod library;
mod llama_cpp;
mod mcp;
mod move_data;
mod notebook_export;
mod openapi;
mod page_assistant;
mod person_limits;
mod postgres;
mod previews;
mod replicas;
mod run_again;
mod sandbox;
mod sandbox_gateway;
mod sandbox_settings;
mod settings;
mod site;
mod store_story;
mod test_app;
mod tokens;
mod uploads;
mod zips;
