//! The gateway's checks of a sandbox policy, ported from NVIDIA's OpenShell source (Apache
//! 2.0; `crates/openshell-policy/src/lib.rs` `validate_sandbox_policy` and
//! `crates/openshell-server/src/grpc/validation.rs` `validate_static_fields_unchanged`, as
//! of commit 2f7fb6559): what Lens sends is refused here as the gateway would refuse it.
//! Not ported: the L7 (REST, MCP) rule semantics and credential signing, which Lens does
//! not use beyond the read-only preset.
//!
//! One check is stricter than the gateway: a network rule that names no program is
//! refused. The gateway takes it, and its proxy then lets nothing out through it (its
//! policy engine matches the calling program against `binaries`), so a test that passes
//! here would fail there without a word.

use tonic::Status;

use crate::proto::openshell::sandbox::v1::{FilesystemPolicy, SandboxPolicy};

/// The gateway's limits on a policy's paths.
const MAX_FILESYSTEM_PATHS: usize = 256;
const MAX_PATH_LENGTH: usize = 4096;

/// `validate_sandbox_policy`: what no policy may hold, created or updated.
pub fn check(policy: &SandboxPolicy) -> Result<(), Status> {
    let mut violations = Vec::new();
    if let Some(process) = &policy.process {
        for (field, value) in [("run_as_user", &process.run_as_user), ("run_as_group", &process.run_as_group)] {
            if !value.is_empty() && !sandbox_identity(value) {
                violations.push(format!("{field} must be 'sandbox' or a non-root id, not '{value}'"));
            }
        }
    }
    if let Some(fs) = &policy.filesystem {
        if fs.read_only.len() + fs.read_write.len() > MAX_FILESYSTEM_PATHS {
            violations.push(format!("more than {MAX_FILESYSTEM_PATHS} filesystem paths"));
        }
        for path in fs.read_only.iter().chain(&fs.read_write) {
            if path.len() > MAX_PATH_LENGTH {
                violations.push("a filesystem path is too long".to_owned());
            } else if !path.starts_with('/') {
                violations.push(format!("filesystem path '{path}' is relative"));
            } else if path.split('/').any(|part| part == "..") {
                violations.push(format!("filesystem path '{path}' climbs with '..'"));
            }
        }
        violations.extend(
            fs.read_write.iter().filter(|p| p.trim_end_matches('/').is_empty()).map(|p| format!("'{p}' read-write")),
        );
    }
    for (key, rule) in &policy.network_policies {
        let name = if rule.name.is_empty() { key } else { &rule.name };
        if rule.binaries.is_empty() || rule.binaries.iter().any(|b| b.path.trim().is_empty()) {
            violations.push(format!("network policy '{name}' names no program, so nothing could use it"));
        }
        for ep in &rule.endpoints {
            if ep.host.trim().is_empty() && ep.allowed_ips.is_empty() {
                violations.push(format!("network policy '{name}' has an endpoint without a host"));
            }
            let ports: Vec<u32> = if ep.ports.is_empty() {
                (ep.port != 0).then_some(ep.port).into_iter().collect()
            } else {
                ep.ports.clone()
            };
            if ports.is_empty() {
                violations.push(format!("network policy '{name}': '{}' has no port", ep.host));
            }
            if let Some(port) = ports.iter().find(|p| !(1..=u32::from(u16::MAX)).contains(*p)) {
                violations.push(format!("network policy '{name}': '{}' port {port} is out of range", ep.host));
            }
            if (ep.host.starts_with("*.") || ep.host.starts_with("**.")) && ep.host.split('.').count() <= 2 {
                violations.push(format!("network policy '{name}': '{}' is a top-level wildcard", ep.host));
            }
            if wildcard_shape_invalid(&ep.host) {
                violations.push(format!("network policy '{name}': '{}' is not a valid wildcard", ep.host));
            }
        }
    }
    if violations.is_empty() {
        Ok(())
    } else {
        Err(Status::invalid_argument(format!("policy contains unsafe content: {}", violations.join("; "))))
    }
}

/// `validate_static_fields_unchanged`: what a live sandbox's policy may not change.
pub fn check_update(baseline: &SandboxPolicy, new: &SandboxPolicy) -> Result<(), Status> {
    filesystem_additive(baseline.filesystem.as_ref(), new.filesystem.as_ref())?;
    if baseline.landlock != new.landlock {
        return Err(Status::invalid_argument(
            "landlock policy cannot be changed on a live sandbox (applied at startup)",
        ));
    }
    if baseline.process != new.process {
        return Err(Status::invalid_argument(
            "process policy cannot be changed on a live sandbox (applied at startup)",
        ));
    }
    Ok(())
}

fn filesystem_additive(baseline: Option<&FilesystemPolicy>, new: Option<&FilesystemPolicy>) -> Result<(), Status> {
    match (baseline, new) {
        (Some(base), Some(new)) => {
            if base.include_workdir != new.include_workdir {
                return Err(Status::invalid_argument("filesystem include_workdir cannot be changed on a live sandbox"));
            }
            let removed =
                base.read_only.iter().find(|p| !new.read_only.contains(p)).map(|p| ("read_only", p)).or_else(|| {
                    base.read_write.iter().find(|p| !new.read_write.contains(p)).map(|p| ("read_write", p))
                });
            match removed {
                Some((kind, path)) => Err(Status::invalid_argument(format!(
                    "filesystem {kind} path '{path}' cannot be removed on a live sandbox"
                ))),
                None => Ok(()),
            }
        }
        (Some(_), None) => Err(Status::invalid_argument("filesystem policy cannot be removed on a live sandbox")),
        (None, _) => Ok(()),
    }
}

/// "sandbox", or a numeric id other than root's and `u32::MAX`.
fn sandbox_identity(value: &str) -> bool {
    value == "sandbox" || value.parse::<u32>().is_ok_and(|id| (1..u32::MAX).contains(&id))
}

fn wildcard_shape_invalid(host: &str) -> bool {
    if host == "*" || host == "**" {
        return true;
    }
    if !host.contains('*') {
        return false;
    }
    let mut labels = host.split('.');
    let first = labels.next().unwrap_or_default();
    (first.contains("**") && first != "**") || labels.any(|l| l.contains("**") || (l.contains('*') && l != "*"))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::proto::openshell::sandbox::v1::{
        LandlockPolicy, NetworkBinary, NetworkEndpoint, NetworkPolicyRule, ProcessPolicy,
    };

    fn policy(binaries: &[&str], host: &str) -> SandboxPolicy {
        let rule = NetworkPolicyRule {
            name: "lens".into(),
            endpoints: vec![NetworkEndpoint { host: host.into(), ports: vec![443], ..Default::default() }],
            binaries: binaries.iter().map(|p| NetworkBinary { path: (*p).into() }).collect(),
        };
        SandboxPolicy {
            version: 1,
            filesystem: Some(FilesystemPolicy {
                include_workdir: true,
                read_only: vec!["/usr".into()],
                read_write: vec!["/tmp".into()],
            }),
            landlock: Some(LandlockPolicy { compatibility: "hard_requirement".into() }),
            process: Some(ProcessPolicy { run_as_user: "sandbox".into(), run_as_group: "sandbox".into() }),
            network_policies: [("lens".to_owned(), rule)].into(),
        }
    }

    #[test]
    fn the_gateways_refusals() {
        assert!(check(&policy(&["/**"], "files.example.org")).is_ok());
        assert!(check(&policy(&[], "files.example.org")).is_err(), "no program named");
        assert!(check(&policy(&["/**"], "*.org")).is_err(), "a top-level wildcard");
        assert!(check(&policy(&["/**"], "a.**b.org")).is_err());
        let mut root = policy(&["/**"], "files.example.org");
        root.process.as_mut().unwrap().run_as_user = "root".into();
        assert!(check(&root).is_err());
        let mut broad = policy(&["/**"], "files.example.org");
        broad.filesystem.as_mut().unwrap().read_write.push("/".into());
        assert!(check(&broad).is_err());
    }

    #[test]
    fn a_live_sandbox_keeps_its_landlock_process_and_paths() {
        let base = policy(&["/**"], "a.example.org");
        let mut more_hosts = base.clone();
        more_hosts.network_policies.clear();
        assert!(check_update(&base, &more_hosts).is_ok(), "network rules may change");
        let mut landlock = base.clone();
        landlock.landlock = Some(LandlockPolicy { compatibility: "best_effort".into() });
        assert!(check_update(&base, &landlock).is_err());
        let mut process = base.clone();
        process.process = None;
        assert!(check_update(&base, &process).is_err());
        let mut fewer = base.clone();
        fewer.filesystem.as_mut().unwrap().read_write.clear();
        assert!(check_update(&base, &fewer).is_err());
    }
}
