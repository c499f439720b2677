//! The OpenShell gateway as Lens speaks to it: its gRPC API from Lens's own minimal
//! `.proto` (the gateway's packages, names and field numbers; only what Lens uses), a
//! mutual-TLS connection from a certificate folder in the gateway's layout, and with the
//! `fake` feature a fake gateway that speaks the same protocol for tests and benches.

/// The generated messages and services, in the gateway's own packages.
pub mod proto {
    #![allow(clippy::all, clippy::pedantic, missing_docs)]
    pub mod openshell {
        pub mod v1 {
            tonic::include_proto!("openshell.v1");
        }
        pub mod datamodel {
            pub mod v1 {
                tonic::include_proto!("openshell.datamodel.v1");
            }
        }
        pub mod sandbox {
            pub mod v1 {
                tonic::include_proto!("openshell.sandbox.v1");
            }
        }
    }
}

#[cfg(feature = "bridge")]
pub mod bridge;
pub mod client;
mod error;
#[cfg(feature = "fake")]
pub mod fake;

pub use client::{CertFolder, GatewayAddress, connect, split_address, workspace_scope};
pub use error::GatewayError;
