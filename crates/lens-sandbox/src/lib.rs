//! Lens's code sandboxes.
//!
//! The server touches a sandbox only through [`SandboxDriver`]: one sandbox per
//! conversation, named `lens-chat-<id>`, with states absent → running → stopped →
//! deleted. Design decisions:
//! - A run is a stream of output chunks followed by exactly one [`RunEnding`]; the
//!   driver never decides what a person or a model sees. [`OutputCapture`] does, the
//!   same way for every driver: the *start* of stdout and the *end* of stderr (where
//!   the result and the traceback are), cut on character boundaries, with byte counts.
//! - Names are DNS labels of at most 19 characters, because the OpenShell gateway names
//!   sandboxes that way; [`sandbox_name`] refuses anything else.
//!
//! [`LocalDriver`] runs sandboxes on this machine with bubblewrap; [`GatewayDriver`] runs
//! them on an OpenShell gateway. Both speak to the same agent inside the sandbox and
//! pass the same behavioural story (`tests/story.rs`).

mod admission;
#[doc(hidden)]
pub mod agent_core;
mod calls;
mod capture;
mod cgroup;
mod check;
mod driver;
pub mod egress;
mod error;
mod gateway;
mod limits;
mod link;
mod local;
mod log_budget;
mod name;
mod quota;
mod reached;
pub mod read_only;
pub mod registries;
mod relay;
mod room;
mod run_stream;
mod shown;
#[doc(hidden)]
pub mod testing;
mod transfer;

pub use admission::{Admission, AdmissionLimits, Elsewhere, Held, Owner, OwnerOf, host_memory};
pub use capture::{CapturedRun, MODEL_TEXT_LIMIT, OutputCapture};
pub use check::check;
pub use driver::{
    DriverSettings, ExecRequest, FileEntry, FilePart, NetworkSoon, RunEvent, RunStream, SandboxDriver, SandboxInfo,
    SandboxState, WholeRun, run_to_end,
};
pub use error::SandboxError;
pub use gateway::{GatewayCheck, GatewayDriver, GatewayOptions, check_gateway, start_gateway};
pub use lens_openshell::{GatewayAddress, split_address as split_gateway_address};
/// The port of the egress proxy on every sandbox's loopback.
pub use lens_sandbox_agent::protocol::PROXY_PORT;
pub use lens_sandbox_agent::protocol::{FILE_PART, Special};
pub use lens_types::{OutputStream, RunEnding, RunOutput};
pub use limits::Limits;
pub use local::{DEFAULT_HOST_UID, LocalDriver, LocalOptions, start_local};
pub use name::sandbox_name;
pub use relay::{ChatNetwork, Network};
pub use transfer::{copy_in, copy_out};
