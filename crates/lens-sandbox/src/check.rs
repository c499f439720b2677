//! `lens sandbox check`: whether this machine can run the local sandbox, piece by piece,
//! with a sentence for each missing piece. It starts a real sandbox in a scratch folder
//! beside the driver's, runs Python's data stack inside, and removes it all again.

use std::{path::Path, process::Command, time::Duration};

use lens_types::{CheckItem, SandboxCheck};

use crate::{
    Limits, LocalDriver, LocalOptions, SandboxDriver, SandboxError, cgroup::Cgroups, local::folders, run_to_end,
};

const PROBE: &str = "import sys, numpy, pandas, matplotlib\n\
print('Python %d.%d.%d' % sys.version_info[:3], 'numpy', numpy.__version__, 'pandas', pandas.__version__, \
'matplotlib', matplotlib.__version__)";

/// The pieces only a started sandbox can tell.
const INSIDE: [&str; 3] = ["Landlock", "seccomp", "Python"];

/// Every inside piece failing for the same reason.
fn inside_failed(reason: &str) -> Vec<CheckItem> {
    INSIDE.iter().map(|n| item(n, Err(Unmet(reason.to_owned())))).collect()
}

/// A need the machine does not meet, as a sentence for the admin.
struct Unmet(String);

impl From<SandboxError> for Unmet {
    fn from(e: SandboxError) -> Self {
        match e {
            SandboxError::Unavailable(sentence) => Self(sentence),
            other => Self(other.to_string()),
        }
    }
}

fn item(name: &str, result: Result<String, Unmet>) -> CheckItem {
    match result {
        Ok(detail) => CheckItem { name: name.into(), ok: true, detail },
        Err(Unmet(detail)) => CheckItem { name: name.into(), ok: false, detail },
    }
}

fn bwrap_version() -> Result<String, Unmet> {
    let out = Command::new("bwrap")
        .arg("--version")
        .output()
        .map_err(|_| Unmet("bubblewrap is not installed (Debian and Ubuntu: apt install bubblewrap)".into()))?;
    Ok(String::from_utf8_lossy(&out.stdout).trim().to_string())
}

fn quota_tools() -> Result<(), Unmet> {
    for tool in ["mkfs.ext4", "mount"] {
        let found = ["/usr/sbin", "/sbin", "/usr/bin", "/bin"].iter().any(|d| Path::new(d).join(tool).exists());
        if !found {
            return Err(Unmet(format!("`{tool}` is missing (Debian and Ubuntu: apt install e2fsprogs mount)")));
        }
    }
    if nix::unistd::geteuid().as_raw() != 0 {
        return Err(Unmet("the workspace quota loop-mounts a file system, which needs Lens to run as root".into()));
    }
    Ok(())
}

/// Whether the sandbox's user can reach the folder its workspaces are mounted in.
fn reachable(options: &LocalOptions) -> Result<String, Unmet> {
    let root = options
        .root
        .canonicalize()
        .or_else(|_| std::path::absolute(&options.root))
        .map_err(|e| Unmet(e.to_string()))?;
    let (mounts, user) = folders::mounts_and_user(options.mounts.as_deref(), &root, options.host_uid);
    folders::passable(&mounts, user)?;
    Ok(format!("workspaces are mounted in {}, which the sandbox's user (uid {user}) can reach", mounts.display()))
}

/// Checks everything the local driver needs, with the driver's own options.
pub async fn check(options: &LocalOptions) -> SandboxCheck {
    let mut items = vec![item("bubblewrap", bwrap_version())];
    let cgroups = Cgroups::detect("lens-check").map(|c| {
        let found = c.describe();
        c.remove_all();
        found
    });
    let cgroups =
        cgroups.map_err(|e| Unmet(format!("{}; the limits on memory, processes and CPU need it", Unmet::from(e).0)));
    items.push(item("cgroups", cgroups));
    items.push(item("disk quota", quota_tools().map(|()| "loop-mounted ext4 per workspace".into())));
    items.push(item("folders", reachable(options)));
    if items.iter().all(|i| i.ok) {
        items.extend(probe(options).await);
    } else {
        items.extend(inside_failed("not checked: a sandbox cannot start until the pieces above work"));
    }
    SandboxCheck { ok: items.iter().all(|i| i.ok), items }
}

/// Starts a scratch sandbox and asks it what it has.
async fn probe(options: &LocalOptions) -> Vec<CheckItem> {
    let scratch = options.root.with_file_name(format!("sandbox-check-{}", std::process::id()));
    let mut scratch_options = options.clone();
    scratch_options.root = scratch.clone();
    // Beside the server's own mounts, never in them: the scratch driver clears its folder.
    scratch_options.mounts = options.mounts.as_ref().map(|m| m.join(format!("sandbox-check-{}", std::process::id())));
    scratch_options.limits = Limits { disk_bytes: 64 << 20, ..options.limits };
    let items = match LocalDriver::new(scratch_options) {
        Ok(driver) => probe_with(&driver).await,
        Err(e) => inside_failed(&e.to_string()),
    };
    let _ = std::fs::remove_dir_all(&scratch);
    items
}

async fn probe_with(driver: &LocalDriver) -> Vec<CheckItem> {
    let chat = "check";
    let started = driver.ensure(chat).await;
    let items = match started {
        Err(e) => inside_failed(&e.to_string()),
        Ok(_) => {
            let (abi, full, seccomp) = driver.confinement(chat).await.unwrap_or_default();
            let landlock = if full {
                format!("ABI {abi}: every right enforced")
            } else {
                format!("ABI {abi}: enforced (rights newer than this kernel are not)")
            };
            let seccomp = if seccomp {
                Ok("allow-list applied".to_string())
            } else {
                Err(Unmet("no seccomp policy for this architecture (only x86_64 has one)".into()))
            };
            let python = match driver.run_python(chat, PROBE, Duration::from_secs(60)).await {
                Ok(run) => match run_to_end(run).await {
                    Ok(r) if r.ending == lens_types::RunEnding::Exited { code: 0 } => Ok(r.stdout_text().trim().into()),
                    Ok(r) => Err(Unmet(format!(
                        "Python or its data stack is missing inside (Debian: apt install python3 python3-numpy \
                         python3-pandas python3-matplotlib): {}",
                        r.stderr_text().lines().last().unwrap_or_default()
                    ))),
                    Err(e) => Err(Unmet(e.to_string())),
                },
                Err(e) => Err(Unmet(e.to_string())),
            };
            vec![item("Landlock", Ok(landlock)), item("seccomp", seccomp), item("Python", python)]
        }
    };
    let _ = driver.delete(chat).await;
    items
}
