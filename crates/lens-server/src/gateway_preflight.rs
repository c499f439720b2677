//! "Run the gateway on this machine": what the Compose `sandbox` profile needs here, and
//! the command that starts it.

use std::time::Duration;

use lens_types::{CheckItem, GatewayPreflight};

use crate::AppError;

/// Where Lens finds the gateway the Compose `sandbox` profile starts.
pub const COMPOSE_ADDRESS: &str = "openshell-gateway:17670";

/// Where compose.yaml mounts the gateway's client certificate folder in Lens's container.
pub const COMPOSE_CERT_DIR: &str = "/var/lib/lens/openshell";

/// The command, run beside compose.yaml on the host.
pub const COMPOSE_COMMAND: &str = "docker compose --profile sandbox up -d";

/// The oldest kernel with Landlock ABI 3 (truncation rights), which OpenShell's sandboxes need.
const LANDLOCK_ABI_3: (u32, u32) = (6, 2);

/// How long the host helper may take to start the profile (images may be pulled).
const HELPER_TIMEOUT: Duration = Duration::from_secs(300);

/// The most of a failing helper's answer that is passed on.
const HELPER_SAYS: usize = 500;

/// `helper`: whether Lens was given a host helper.
pub async fn preflight(helper: bool) -> GatewayPreflight {
    let items = vec![compose().await, sixty_four_bit(), landlock()];
    GatewayPreflight {
        ok: items.iter().all(|i| i.ok),
        items,
        command: COMPOSE_COMMAND.into(),
        address: COMPOSE_ADDRESS.into(),
        cert_dir: COMPOSE_CERT_DIR.into(),
        helper,
    }
}

/// Asks the host helper at `url` to start the Compose `sandbox` profile: `POST
/// <url>/v1/compose/up` with `{"profile": "sandbox"}`, done when it answers 2xx.
pub async fn start_with_helper(http: &reqwest::Client, url: &str) -> Result<(), AppError> {
    let endpoint = format!("{}/v1/compose/up", url.trim_end_matches('/'));
    let sent = http
        .post(&endpoint)
        .json(&serde_json::json!({ "profile": "sandbox" }))
        .timeout(HELPER_TIMEOUT)
        .send()
        .await
        .map_err(|e| AppError::HostHelperFailed(format!("the host helper at {url} could not be reached: {e}")))?;
    let status = sent.status();
    if status.is_success() {
        return Ok(());
    }
    let said = sent.text().await.unwrap_or_default();
    let said: String = said.trim().chars().take(HELPER_SAYS).collect();
    Err(AppError::HostHelperFailed(format!(
        "the host helper could not start the gateway (HTTP {}){}",
        status.as_u16(),
        if said.is_empty() { String::new() } else { format!(": {said}") }
    )))
}

fn item(name: &str, ok: bool, detail: String) -> CheckItem {
    CheckItem { name: name.into(), ok, detail }
}

/// Lens under Compose (compose.yaml says so in `LENS_COMPOSE`), or a Compose on this host.
async fn compose() -> CheckItem {
    if std::env::var("LENS_COMPOSE").is_ok_and(|v| v == "1") {
        return item("Compose", true, "Lens runs under Compose (compose.yaml)".into());
    }
    let version = tokio::process::Command::new("docker")
        .args(["compose", "version", "--short"])
        .stdin(std::process::Stdio::null())
        .kill_on_drop(true)
        .output();
    match tokio::time::timeout(Duration::from_secs(10), version).await {
        Ok(Ok(out)) if out.status.success() => {
            item("Compose", true, format!("Docker Compose {}", String::from_utf8_lossy(&out.stdout).trim()))
        }
        _ => item(
            "Compose",
            false,
            "no Docker Compose here: install Docker Engine with its Compose plugin, or run Lens with compose.yaml"
                .into(),
        ),
    }
}

fn sixty_four_bit() -> CheckItem {
    let arch = std::env::consts::ARCH;
    let ok = matches!(arch, "x86_64" | "aarch64");
    let detail = if ok { arch.to_owned() } else { format!("{arch}: OpenShell's images are for x86_64 and aarch64") };
    item("64-bit machine", ok, detail)
}

/// Landlock ABI 3 or newer: Linux 6.2 or newer with Landlock among the security modules.
fn landlock() -> CheckItem {
    let release = std::fs::read_to_string("/proc/sys/kernel/osrelease").unwrap_or_default();
    let mut parts = release.trim().split(['.', '-']).map(|p| p.parse::<u32>().unwrap_or(0));
    let version = (parts.next().unwrap_or(0), parts.next().unwrap_or(0));
    let lsm = std::fs::read_to_string("/sys/kernel/security/lsm").ok();
    let enabled = lsm.as_deref().map(|l| l.split(',').any(|m| m.trim() == "landlock"));
    let ok = version >= LANDLOCK_ABI_3 && enabled != Some(false);
    let detail = match (ok, enabled) {
        (true, Some(true)) => format!("Linux {}: Landlock ABI 3 or newer", release.trim()),
        (true, _) => format!("Linux {} (Landlock ABI 3 or newer, if the kernel enables it)", release.trim()),
        (false, Some(false)) => "the kernel does not enable Landlock (add it to the lsm= boot option)".into(),
        (false, _) => format!("Linux {}: Landlock ABI 3 needs Linux 6.2 or newer", release.trim()),
    };
    item("Landlock", ok, detail)
}
