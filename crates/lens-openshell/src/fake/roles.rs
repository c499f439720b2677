//! Who may call: the gateway's role check of a caller known by its client certificate,
//! ported from NVIDIA's OpenShell (`crates/openshell-server/src/multiplex.rs`
//! `extract_peer_identity`: the certificate's OUs are its roles; `auth/authz.rs`
//! `AuthzPolicy::check` with the default role names; commit 2f7fb6559). Every call
//! Lens makes is annotated with a workspace role in the wheel's descriptors, which
//! needs the user role at this level (the admin role stands in for it); the
//! workspace-level check behind it is not ported.

use tonic::{Request, Status};

/// The gateway's default role names.
const USER_ROLE: &str = "openshell-user";
const ADMIN_ROLE: &str = "openshell-admin";

/// Refuses a caller whose certificate carries neither role, as the gateway does.
pub fn check<T>(request: &Request<T>) -> Result<(), Status> {
    let roles = request.peer_certs().and_then(|certs| certs.first().map(|c| roles_of(c.as_ref()))).unwrap_or_default();
    if roles.iter().any(|r| r == USER_ROLE || r == ADMIN_ROLE) {
        Ok(())
    } else {
        Err(Status::permission_denied(format!("role '{USER_ROLE}' required")))
    }
}

/// The OUs of a certificate's subject.
fn roles_of(der: &[u8]) -> Vec<String> {
    x509_parser::parse_x509_certificate(der)
        .map(|(_, cert)| {
            cert.subject().iter_organizational_unit().filter_map(|a| a.as_str().ok().map(str::to_owned)).collect()
        })
        .unwrap_or_default()
}
