//! The code sandbox's settings: stored in the database, overridden field by field by a
//! `--sandbox-*` option or `LENS_SANDBOX_*` variable (shown locked), checked as a whole
//! before anything is written.

use lens_types::{
    NetworkMode, SandboxBackend, SandboxField as F, SandboxNumber, SandboxSettingsView, UpdateSandboxSettingsRequest,
};

use crate::{AppError, Config, store::Store};

/// The settings in force.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SandboxSettings {
    pub enabled: bool,
    pub backend: SandboxBackend,
    pub gateway_address: String,
    pub gateway_cert_dir: String,
    pub gateway_server_name: String,
    pub network: NetworkMode,
    pub hosts: Vec<String>,
    pub trusted_egress: Vec<String>,
    pub people_allow_hosts: bool,
    pub shown: u64,
    pub timeout_secs: u64,
    pub memory_mb: u64,
    pub processes: u64,
    pub cpu_millis: u64,
    pub disk_mb: u64,
    pub idle_stop_secs: u64,
    pub unused_delete_days: u64,
    /// 0: from the host.
    pub max_running: u64,
    /// 0: a quarter of `max_running`, at least 1.
    pub max_running_per_person: u64,
    /// 0: from the host.
    pub max_memory_mb: u64,
    pub queue_wait_secs: u64,
    pub pool_size: u64,
    pub locked: Vec<String>,
}

/// A setting's stored key.
fn key(name: &str) -> String {
    format!("sandbox.{name}")
}

impl SandboxSettings {
    /// The settings in force: the operator's `LENS_SANDBOX_*` values (locked), else the
    /// stored ones, else the defaults.
    pub async fn load(config: &Config, store: &Store) -> Result<Self, AppError> {
        let mut locked = Vec::new();
        let mut lock = |field: &str, set: bool| {
            if set {
                locked.push(field.to_owned());
            }
        };
        lock(F::Enabled.name(), config.sandbox.is_some());
        let enabled = match config.sandbox {
            Some(on) => on,
            None => store.setting(&key(F::Enabled.name())).await?.as_deref() == Some("true"),
        };
        let backend_env = config.sandbox_backend.as_deref().and_then(SandboxBackend::parse);
        lock(F::Backend.name(), backend_env.is_some());
        let backend = match backend_env {
            Some(b) => b,
            None => store
                .setting(&key(F::Backend.name()))
                .await?
                .as_deref()
                .and_then(SandboxBackend::parse)
                .unwrap_or_default(),
        };
        let mut gateway = Vec::new();
        for (field, env) in [
            (F::GatewayAddress.name(), &config.sandbox_gateway),
            (F::GatewayCertDir.name(), &config.sandbox_gateway_certs),
            (F::GatewayServerName.name(), &config.sandbox_gateway_server_name),
        ] {
            lock(field, env.is_some());
            gateway.push(match env {
                Some(v) => v.trim().to_owned(),
                None => store.setting(&key(field)).await?.unwrap_or_default(),
            });
        }
        let [gateway_address, gateway_cert_dir, gateway_server_name] =
            <[String; 3]>::try_from(gateway).map_err(|_| AppError::internal("sandbox gateway settings"))?;
        let network_env = config.sandbox_network.as_deref().and_then(NetworkMode::parse);
        lock(F::Network.name(), network_env.is_some());
        let network = match network_env {
            Some(n) => n,
            None => store
                .setting(&key(F::Network.name()))
                .await?
                .as_deref()
                .and_then(NetworkMode::parse)
                .unwrap_or_default(),
        };
        let list = |stored: Option<String>| stored.and_then(|s| serde_json::from_str::<Vec<String>>(&s).ok());
        lock(F::Hosts.name(), config.sandbox_hosts.is_some());
        let hosts = match &config.sandbox_hosts {
            Some(h) => h.clone(),
            None => list(store.setting(&key(F::Hosts.name())).await?).unwrap_or_default(),
        };
        lock(F::TrustedEgress.name(), config.sandbox_trusted_egress.is_some());
        let trusted_egress = match &config.sandbox_trusted_egress {
            Some(t) => t.clone(),
            None => list(store.setting(&key(F::TrustedEgress.name())).await?).unwrap_or_default(),
        };
        let people_allow_hosts = store.setting(&key(F::PeopleAllowHosts.name())).await?.as_deref() == Some("true");
        let mut numbers = std::collections::BTreeMap::new();
        for number in SandboxNumber::ALL {
            let spec = number.spec();
            let value = match config.sandbox_numbers.get(number) {
                Some(v) => {
                    lock(spec.name, true);
                    v
                }
                None => store.setting(&key(spec.name)).await?.and_then(|v| v.parse().ok()).unwrap_or(spec.default),
            };
            numbers.insert(number, value);
        }
        let number = |n: SandboxNumber| numbers.get(&n).copied().unwrap_or(n.spec().default);
        Ok(Self {
            enabled,
            backend,
            gateway_address,
            gateway_cert_dir,
            gateway_server_name,
            network,
            hosts,
            trusted_egress,
            people_allow_hosts,
            shown: number(SandboxNumber::Shown),
            timeout_secs: number(SandboxNumber::TimeoutSecs),
            memory_mb: number(SandboxNumber::MemoryMb),
            processes: number(SandboxNumber::Processes),
            cpu_millis: number(SandboxNumber::CpuMillis),
            disk_mb: number(SandboxNumber::DiskMb),
            idle_stop_secs: number(SandboxNumber::IdleStopSecs),
            unused_delete_days: number(SandboxNumber::UnusedDeleteDays),
            max_running: number(SandboxNumber::MaxRunning),
            max_running_per_person: number(SandboxNumber::MaxRunningPerPerson),
            max_memory_mb: number(SandboxNumber::MaxMemoryMb),
            queue_wait_secs: number(SandboxNumber::QueueWaitSecs),
            pool_size: number(SandboxNumber::PoolSize),
            locked,
        })
    }

    /// The settings as the admin's page shows them, with what the sandbox reports.
    pub fn view(&self, status: SandboxStatus) -> SandboxSettingsView {
        let host = lens_sandbox::AdmissionLimits::for_host();
        let admission = self.admission();
        SandboxSettingsView {
            enabled: self.enabled,
            backend: self.backend,
            gateway_address: self.gateway_address.clone(),
            gateway_cert_dir: self.gateway_cert_dir.clone(),
            gateway_server_name: self.gateway_server_name.clone(),
            gateway_check: status.gateway_check,
            sandbox_count: status.sandbox_count,
            network: self.network,
            hosts: self.hosts.clone(),
            trusted_egress: self.trusted_egress.clone(),
            people_allow_hosts: self.people_allow_hosts,
            registries: status.registries,
            shown: self.shown,
            timeout_secs: self.timeout_secs,
            memory_mb: self.memory_mb,
            processes: self.processes,
            cpu_millis: self.cpu_millis,
            disk_mb: self.disk_mb,
            idle_stop_secs: self.idle_stop_secs,
            unused_delete_days: self.unused_delete_days,
            max_running: self.max_running,
            max_running_per_person: self.max_running_per_person,
            max_memory_mb: self.max_memory_mb,
            queue_wait_secs: self.queue_wait_secs,
            pool_size: self.pool_size,
            auto_max_running: host.max_running as u64,
            auto_max_running_per_person: lens_sandbox::AdmissionLimits::per_person_for(admission.max_running) as u64,
            auto_max_memory_mb: host.max_memory_bytes >> 20,
            locked: self.locked.clone(),
            check: status.check,
            recent_egress: status.recent_egress,
        }
    }

    /// The sandbox's limits as the driver takes them.
    pub fn limits(&self) -> lens_sandbox::Limits {
        lens_sandbox::Limits {
            memory_bytes: self.memory_mb << 20,
            processes: self.processes,
            cpu_millis: self.cpu_millis,
            disk_bytes: self.disk_mb << 20,
        }
    }

    /// How many sandboxes may run at once, with how much memory, and how many of them one
    /// person's; 0 meaning the host's own defaults (a quarter of the sandboxes per person).
    pub fn admission(&self) -> lens_sandbox::AdmissionLimits {
        let host = lens_sandbox::AdmissionLimits::for_host();
        let max_running = if self.max_running == 0 { host.max_running } else { self.max_running as usize };
        lens_sandbox::AdmissionLimits {
            max_running,
            max_memory_bytes: if self.max_memory_mb == 0 { host.max_memory_bytes } else { self.max_memory_mb << 20 },
            wait: std::time::Duration::from_secs(self.queue_wait_secs),
            per_person: match self.max_running_per_person {
                0 => lens_sandbox::AdmissionLimits::per_person_for(max_running),
                n => n as usize,
            },
        }
    }

    /// An admin's change as the stored settings it writes: refused whole if a locked
    /// field is touched or a value is out of range.
    pub fn changes(&self, req: &UpdateSandboxSettingsRequest) -> Result<Vec<(String, Option<String>)>, AppError> {
        let current = self;
        let touched = [
            (F::Enabled.name(), req.enabled.is_some()),
            (F::Backend.name(), req.backend.is_some()),
            (F::GatewayAddress.name(), req.gateway_address.is_some()),
            (F::GatewayCertDir.name(), req.gateway_cert_dir.is_some()),
            (F::GatewayServerName.name(), req.gateway_server_name.is_some()),
            (F::Network.name(), req.network.is_some()),
            (F::Hosts.name(), req.hosts.is_some()),
            (F::TrustedEgress.name(), req.trusted_egress.is_some()),
            (F::PeopleAllowHosts.name(), req.people_allow_hosts.is_some()),
        ]
        .into_iter()
        .chain(SandboxNumber::ALL.map(|n| (n.spec().name, req.number(n).is_some())));
        for (field, is_touched) in touched {
            if is_touched && current.locked.iter().any(|l| l == field) {
                return Err(AppError::Conflict(format!(
                    "`{field}` is set by the server's environment and cannot be changed here"
                )));
            }
        }
        let mut pairs: Vec<(String, Option<String>)> = Vec::new();
        for number in SandboxNumber::ALL {
            if let Some(v) = req.number(number) {
                let v = number.check(v).map_err(|e| AppError::BadRequest(e.to_string()))?;
                pairs.push((key(number.spec().name), Some(v.to_string())));
            }
        }
        if let Some(hosts) = &req.hosts {
            let hosts = clean_hosts(hosts)?;
            pairs.push((key(F::Hosts.name()), Some(serde_json::to_string(&hosts).map_err(AppError::internal)?)));
        }
        if let Some(ranges) = &req.trusted_egress {
            let ranges = clean_ranges(ranges)?;
            pairs.push((
                key(F::TrustedEgress.name()),
                Some(serde_json::to_string(&ranges).map_err(AppError::internal)?),
            ));
        }
        if let Some(network) = req.network {
            pairs.push((key(F::Network.name()), Some(network.as_str().to_owned())));
        }
        if let Some(allow) = req.people_allow_hosts {
            pairs.push((key(F::PeopleAllowHosts.name()), Some(allow.to_string())));
        }
        if let Some(enabled) = req.enabled {
            pairs.push((key(F::Enabled.name()), Some(enabled.to_string())));
        }
        if let Some(backend) = req.backend {
            pairs.push((key(F::Backend.name()), Some(backend.as_str().to_owned())));
        }
        if let Some(address) = &req.gateway_address {
            pairs.push((key(F::GatewayAddress.name()), Some(clean_address(address)?)));
        }
        if let Some(dir) = &req.gateway_cert_dir {
            pairs.push((key(F::GatewayCertDir.name()), Some(clean_cert_dir(dir)?)));
        }
        if let Some(name) = &req.gateway_server_name {
            pairs.push((key(F::GatewayServerName.name()), Some(clean_server_name(name)?)));
        }
        Ok(pairs)
    }
}

/// What the sandbox reports of itself, for the admin's page.
pub struct SandboxStatus {
    pub gateway_check: Option<lens_types::GatewayCheckView>,
    pub sandbox_count: u64,
    pub registries: Vec<String>,
    pub check: Option<lens_types::SandboxCheck>,
    pub recent_egress: Vec<lens_sandbox::egress::EgressDecision>,
}

/// Host names: lowercase DNS names, no addresses, no duplicates.
fn clean_hosts(hosts: &[String]) -> Result<Vec<String>, AppError> {
    if hosts.len() > 200 {
        return Err(AppError::BadRequest("at most 200 hosts".into()));
    }
    let mut out: Vec<String> = Vec::new();
    for host in hosts {
        let host = host.trim_matches([' ', '\t', '\r', '\n']).trim_end_matches('.').to_ascii_lowercase();
        if host.is_empty() {
            continue;
        }
        if !lens_sandbox::egress::is_host_name(&host) {
            return Err(AppError::BadRequest(format!(
                "`{host}` is not a host name (letters, digits, - and dots; addresses are not allowed)"
            )));
        }
        if !out.contains(&host) {
            out.push(host);
        }
    }
    Ok(out)
}

/// CIDR ranges such as `10.0.0.0/8` or `fd00::/8`.
fn clean_ranges(ranges: &[String]) -> Result<Vec<String>, AppError> {
    if ranges.len() > 100 {
        return Err(AppError::BadRequest("at most 100 ranges".into()));
    }
    let mut out = Vec::new();
    for range in ranges.iter().map(|r| r.trim_matches([' ', '\t', '\r', '\n'])).filter(|r| !r.is_empty()) {
        let cidr = Some(range)
            .filter(|r| r.chars().all(|c| c.is_ascii_graphic()))
            .and_then(lens_sandbox::egress::Cidr::parse)
            .ok_or_else(|| AppError::BadRequest(format!("`{range}` is not a CIDR range such as 10.0.0.0/8")))?;
        out.push(cidr.to_string());
    }
    Ok(out)
}

/// A gateway address: `host` or `host:port`, no scheme's path or credentials.
fn clean_address(address: &str) -> Result<String, AppError> {
    let address = address.trim_matches([' ', '\t', '\r', '\n']).trim_start_matches("https://").trim_end_matches('/');
    if address.is_empty() {
        return Ok(String::new());
    }
    let host_ok = lens_sandbox::split_gateway_address(address)
        .is_some_and(|(host, _)| lens_sandbox::egress::is_host_name(host) || host.parse::<std::net::IpAddr>().is_ok());
    // Printable ASCII only: a name in another script is written in its `xn--` form.
    if !host_ok || !address.chars().all(|c| c.is_ascii_graphic()) || address.chars().count() > 253 {
        return Err(AppError::BadRequest(format!("`{address}` is not a gateway address (host or host:port)")));
    }
    Ok(address.to_owned())
}

/// The certificate folder: an absolute path on the server.
fn clean_cert_dir(dir: &str) -> Result<String, AppError> {
    // ASCII blanks and characters, as the document's pattern and `maxLength` say.
    let dir = dir.trim_matches([' ', '\t', '\r', '\n']);
    if !dir.is_empty() && (!dir.starts_with('/') || dir.contains('\0') || dir.chars().count() > 4096) {
        return Err(AppError::BadRequest(
            "the certificate folder must be an absolute path on the server, such as /var/lib/lens/openshell".into(),
        ));
    }
    Ok(dir.to_owned())
}

/// The TLS server name: a host name, or nothing.
fn clean_server_name(name: &str) -> Result<String, AppError> {
    let name = name.trim_matches([' ', '\t', '\r', '\n']).to_ascii_lowercase();
    if !name.is_empty() && !lens_sandbox::egress::is_host_name(&name) {
        return Err(AppError::BadRequest(format!("`{name}` is not a host name")));
    }
    Ok(name)
}
