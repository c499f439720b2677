//! The code sandbox as the server runs it: turned on and off at runtime from the
//! settings, its limits and network put into force, and a routines loop that stops idle
//! sandboxes, deletes unused ones and those whose conversation is gone.

use std::{
    path::PathBuf,
    sync::{Arc, RwLock},
    time::Duration,
};

use lens_sandbox::{
    DriverSettings, GatewayAddress, GatewayOptions, LocalOptions, Network, SandboxDriver, SandboxError, SandboxInfo,
    SandboxState,
    egress::{Cidr, EgressDecision, EgressPolicy},
    read_only::UpstreamTrust,
    registries::{Registries, sandbox_env},
};
use lens_types::{GatewayCheckView, NetworkMode, SandboxBackend, SandboxCheck};

use crate::{
    AppError, Config,
    sandbox_settings::{SandboxSettings, SandboxStatus},
    store::{AuditNote, Store},
    tools::RunSettings,
};

/// The sandbox switch and what goes with it. One per server.
pub struct SandboxHub {
    root: PathBuf,
    agent: PathBuf,
    /// Where workspaces are mounted, when configured.
    mounts: Option<PathBuf>,
    /// Configured index URLs; `None`: ask the host's pip and npm (once, when first needed).
    configured_registries: Option<Vec<String>>,
    registries: std::sync::OnceLock<Registries>,
    /// An extra authority the registries' certificates may come from (a mirror's own).
    registry_ca: Option<PathBuf>,
    /// Whom the read-only registry proxy trusts on its way out; `Err` says why none.
    upstream_trust: std::sync::OnceLock<Result<UpstreamTrust, SandboxError>>,
    active: RwLock<Option<Active>>,
    /// The settings last put into force here (or tried): another replica may have changed
    /// them since.
    applied: RwLock<Option<SandboxSettings>>,
    check: RwLock<Option<SandboxCheck>>,
    gateway_check: RwLock<Option<GatewayCheckView>>,
    /// Sandboxes that exist, as last counted.
    count: std::sync::atomic::AtomicU64,
    /// One change at a time (turning on runs the check, turning off deletes sandboxes).
    switching: tokio::sync::Mutex<()>,
    /// Whose a conversation is, for admission's fair shares.
    owners: lens_sandbox::OwnerOf,
    /// The other replicas, when there may be others: what their sandboxes hold counts
    /// against the limits with this one's.
    elsewhere: std::sync::OnceLock<Arc<dyn lens_sandbox::Elsewhere>>,
    /// Where the settings are kept, and which conversations exist.
    pub(crate) store: Store,
    /// The operator's configuration: its `LENS_SANDBOX_*` values lock settings.
    pub(crate) config: Arc<Config>,
}

#[derive(Clone)]
struct Active {
    driver: Arc<dyn SandboxDriver>,
    run: RunSettings,
    /// Where its sandboxes run: a change of it is a new driver.
    place: Place,
}

/// Where sandboxes run, as far as a change of it needs a new driver.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Place {
    Local,
    Gateway(GatewayAddress),
}

impl Place {
    fn of(settings: &SandboxSettings) -> Self {
        match settings.backend {
            SandboxBackend::Local => Self::Local,
            SandboxBackend::Gateway => Self::Gateway(GatewayAddress {
                address: settings.gateway_address.clone(),
                cert_dir: settings.gateway_cert_dir.clone().into(),
                server_name: Some(settings.gateway_server_name.clone()).filter(|n| !n.is_empty()),
            }),
        }
    }
}

impl SandboxHub {
    /// Finds the registries (configured, or the host's pip and npm) once, at start.
    pub fn new(config: Arc<Config>, store: Store) -> Self {
        // Admission shares the sandboxes between people: it asks whose a conversation is,
        // and their share when their groups give them one.
        let (owners_of, owners_config) = (store.clone(), config.clone());
        let owners: lens_sandbox::OwnerOf = Arc::new(move |chat: String| {
            let (store, config) = (owners_of.clone(), owners_config.clone());
            Box::pin(async move { owner_of(&store, &config, &chat).await })
        });
        Self {
            root: config.data_dir.join("sandboxes"),
            agent: config.sandbox_agent_path(),
            mounts: config.sandbox_mounts.clone(),
            configured_registries: config.sandbox_registries.clone(),
            registries: std::sync::OnceLock::new(),
            registry_ca: config.sandbox_registry_ca.clone(),
            upstream_trust: std::sync::OnceLock::new(),
            active: RwLock::default(),
            applied: RwLock::default(),
            check: RwLock::default(),
            gateway_check: RwLock::default(),
            count: Default::default(),
            switching: tokio::sync::Mutex::default(),
            owners,
            elsewhere: std::sync::OnceLock::new(),
            store,
            config,
        }
    }

    /// Shares the sandboxes' capacity with other replicas, before the sandbox starts.
    pub fn share_with(&self, others: Arc<dyn lens_sandbox::Elsewhere>) {
        let _ = self.elsewhere.set(others);
    }

    /// What this replica's sandboxes hold now.
    pub fn held(&self) -> lens_sandbox::Held {
        self.driver().map(|d| d.held()).unwrap_or_default()
    }

    /// The settings in force.
    pub async fn settings(&self) -> Result<SandboxSettings, AppError> {
        SandboxSettings::load(&self.config, &self.store).await
    }

    /// `settings` as the admin's page shows them, with what the sandbox reports.
    pub fn view(&self, settings: &SandboxSettings) -> lens_types::SandboxSettingsView {
        settings.view(SandboxStatus {
            gateway_check: self.last_gateway_check(),
            sandbox_count: self.count(),
            registries: self.registries().hosts.clone(),
            check: self.last_check(),
            recent_egress: self.egress_log(),
        })
    }

    /// Applies an admin's change: refused whole if a locked field is touched or a value
    /// is out of range; then stored and put into force (turning the sandbox on runs the
    /// check first and refuses with its reasons). A refused change leaves nothing stored.
    pub async fn update_settings(
        &self,
        req: lens_types::UpdateSandboxSettingsRequest,
        audit: Option<AuditNote>,
    ) -> Result<SandboxSettings, AppError> {
        let pairs = self.settings().await?.changes(&req)?;
        let mut old = Vec::new();
        for (k, _) in &pairs {
            old.push((k.clone(), self.store.setting(k).await?));
        }
        let changes = crate::audit::changes(&refs(&old), &refs(&pairs), &[]);
        let note = audit.filter(|_| !changes.is_empty()).map(|n| n.target("sandbox").changes(changes));
        self.write_settings(&pairs, note.as_slice()).await?;
        let next = self.settings().await?;
        if next.backend == SandboxBackend::Gateway
            && (next.gateway_address.is_empty() || next.gateway_cert_dir.is_empty())
        {
            let undo = note.as_ref().map(|n| n.undone("a gateway needs its address and certificate folder"));
            self.write_settings(&old, undo.as_slice()).await?;
            // A conflict with what is saved (this change, or an earlier one, may give them).
            return Err(AppError::Conflict(
                "sandboxes on a gateway need its address and its certificate folder: give them first".into(),
            ));
        }
        // Put into force; if the sandbox cannot be turned on, nothing of the change stays.
        if let Err(refused) = self.apply(&next).await {
            let undo = note.as_ref().map(|n| n.undone("the sandbox could not be put into force"));
            self.write_settings(&old, undo.as_slice()).await?;
            return Err(refused);
        }
        Ok(next)
    }

    async fn write_settings(&self, pairs: &[(String, Option<String>)], audit: &[AuditNote]) -> Result<(), AppError> {
        self.store.set_settings(&refs(pairs), audit).await?;
        Ok(())
    }

    /// The driver, when the sandbox is on.
    pub fn driver(&self) -> Option<Arc<dyn SandboxDriver>> {
        self.active.read().ok().and_then(|a| a.as_ref().map(|a| a.driver.clone()))
    }

    /// The driver and the run settings together, when the sandbox is on.
    pub fn current(&self) -> Option<(Arc<dyn SandboxDriver>, RunSettings)> {
        let active = self.active.read().ok()?.clone()?;
        Some((active.driver, active.run))
    }

    /// The registries `registries` mode allows (asking pip and npm costs a moment, so
    /// only when first needed).
    pub fn registries(&self) -> &Registries {
        self.registries.get_or_init(|| {
            let found = match &self.configured_registries {
                Some(urls) => Registries::configured(urls),
                None => Registries::discover(),
            };
            if found.credentials_withheld {
                tracing::warn!(
                    "a package index URL carries credentials; sandboxes are given it without them, so an index that \
                     needs them refuses the sandbox's pip or npm"
                );
            }
            found
        })
    }

    /// Finds the registries off the async threads (pip and npm are slow to answer).
    pub async fn find_registries(self: &Arc<Self>) {
        let hub = self.clone();
        let _ = tokio::task::spawn_blocking(move || {
            hub.registries();
        })
        .await;
    }

    pub fn last_check(&self) -> Option<SandboxCheck> {
        self.check.read().ok().and_then(|c| c.clone())
    }

    pub fn last_gateway_check(&self) -> Option<GatewayCheckView> {
        self.gateway_check.read().ok().and_then(|c| c.clone())
    }

    /// Sandboxes that exist, as last counted by [`Self::recount`].
    pub fn count(&self) -> u64 {
        self.count.load(std::sync::atomic::Ordering::Relaxed)
    }

    /// Counts the sandboxes that exist now (none when the sandbox is off).
    pub async fn recount(&self) {
        let n = match self.driver() {
            Some(d) => d.list().await.map(|l| l.len() as u64).unwrap_or(0),
            None => 0,
        };
        self.count.store(n, std::sync::atomic::Ordering::Relaxed);
    }

    fn gateway_options(&self, address: GatewayAddress) -> GatewayOptions {
        let mut options = GatewayOptions::new(address, self.agent.clone());
        // Beside the local sandboxes' folder, in the data directory.
        options.last_used_file = Some(self.root.with_file_name("gateway-last-used.json"));
        options
    }

    /// Checks the gateway these settings name (health, version, a test sandbox) and
    /// keeps the result.
    pub async fn run_gateway_check(&self, settings: &SandboxSettings) -> GatewayCheckView {
        let view = match Place::of(settings) {
            Place::Local => {
                return self.last_gateway_check().unwrap_or(GatewayCheckView {
                    ok: false,
                    message: "sandboxes run on this machine; no gateway is set".into(),
                    version: None,
                    round_trip_ms: None,
                    sandbox_ms: None,
                });
            }
            Place::Gateway(address) => match lens_sandbox::check_gateway(&self.gateway_options(address)).await {
                Ok(c) => GatewayCheckView {
                    ok: true,
                    message: format!(
                        "OpenShell {} answers in {} ms; a test sandbox was created, run and deleted in {} ms",
                        c.version, c.round_trip_ms, c.sandbox_ms
                    ),
                    version: Some(c.version),
                    round_trip_ms: Some(c.round_trip_ms),
                    sandbox_ms: Some(c.sandbox_ms),
                },
                Err(e) => GatewayCheckView {
                    ok: false,
                    message: e.to_string(),
                    version: None,
                    round_trip_ms: None,
                    sandbox_ms: None,
                },
            },
        };
        if let Ok(mut c) = self.gateway_check.write() {
            *c = Some(view.clone());
        }
        view
    }

    /// The latest egress decisions, newest last.
    pub fn egress_log(&self) -> Vec<EgressDecision> {
        self.driver().map(|d| d.egress_log()).unwrap_or_default()
    }

    fn options(&self, settings: &SandboxSettings) -> LocalOptions {
        let mut options = LocalOptions::new(&self.root, &self.agent);
        options.mounts = self.mounts.clone();
        options.limits = settings.limits();
        options.admission = settings.admission();
        options
    }

    /// Runs `sandbox check` with these settings and keeps the result.
    pub async fn run_check(&self, settings: &SandboxSettings) -> SandboxCheck {
        let mut options = self.options(settings);
        // The check's scratch sandbox lives beside the real ones, never among them.
        options.root = self.root.with_file_name("sandbox-check");
        let check = lens_sandbox::check(&options).await;
        if let Ok(mut c) = self.check.write() {
            *c = Some(check.clone());
        }
        check
    }

    /// Puts settings into force: turns the sandbox on (after a passing check) or off
    /// (deleting every sandbox), and applies limits, network and run settings.
    pub async fn apply(&self, settings: &SandboxSettings) -> Result<(), AppError> {
        let _one_at_a_time = self.switching.lock().await;
        let applied = self.apply_now(settings).await;
        // Tried, in force or refused: followed again only once the stored settings change.
        if let Ok(mut last) = self.applied.write() {
            *last = Some(settings.clone());
        }
        applied
    }

    /// Puts the settings stored now into force if they are not what this server last
    /// applied: an admin changed them through another replica.
    pub async fn follow_settings(&self) {
        let Ok(settings) = self.settings().await else { return };
        if self.applied.read().is_ok_and(|a| a.as_ref() == Some(&settings)) {
            return;
        }
        match self.apply(&settings).await {
            Ok(()) => tracing::info!("the sandbox settings changed elsewhere are in force here too"),
            Err(e) => {
                tracing::warn!(error = %e, "the sandbox settings changed elsewhere cannot be put into force here")
            }
        }
    }

    async fn apply_now(&self, settings: &SandboxSettings) -> Result<(), AppError> {
        let run = RunSettings {
            timeout: Duration::from_secs(settings.timeout_secs),
            shown: settings.shown as usize,
            network: settings.network,
            memory_mb: settings.memory_mb,
            disk_mb: settings.disk_mb,
            people_allow_hosts: settings.people_allow_hosts,
            within: None,
        };
        let driver_settings = DriverSettings {
            limits: settings.limits(),
            admission: settings.admission(),
            pool_size: settings.pool_size as usize,
            network: self.network(settings),
        };
        if !settings.enabled {
            let taken = self.active.write().map(|mut a| a.take()).unwrap_or(None);
            if let Some(active) = taken {
                delete_all(&*active.driver).await;
            }
            return Ok(());
        }
        let place = Place::of(settings);
        let current = self.active.read().ok().and_then(|a| a.clone());
        if let Some(active) = &current
            && active.place == place
        {
            // A network the backend refuses is the admin's error; the driver kept the old.
            active.driver.reconfigure(&driver_settings).await.map_err(conflict)?;
            if let Ok(mut a) = self.active.write()
                && let Some(active) = a.as_mut()
            {
                active.run = run;
            }
            return Ok(());
        }
        // A new place: the new driver must work before the old one's sandboxes go.
        let driver = match &place {
            Place::Local => {
                let check = self.run_check(settings).await;
                if !check.ok {
                    let missing: Vec<String> =
                        check.items.iter().filter(|i| !i.ok).map(|i| format!("{}: {}", i.name, i.detail)).collect();
                    return Err(AppError::Conflict(format!(
                        "the code sandbox cannot be turned on here. {}",
                        missing.join("; ")
                    )));
                }
                lens_sandbox::start_local(self.options(settings), &driver_settings).map_err(conflict)?
            }
            Place::Gateway(address) => {
                let check = self.run_gateway_check(settings).await;
                if !check.ok {
                    return Err(AppError::Conflict(format!("the OpenShell gateway cannot be used: {}", check.message)));
                }
                lens_sandbox::start_gateway(self.gateway_options(address.clone()), &driver_settings)
                    .map_err(conflict)?
            }
        };
        driver.set_owners(self.owners.clone());
        if let Some(elsewhere) = self.elsewhere.get() {
            driver.set_elsewhere(elsewhere.clone());
        }
        // Switching deletes every sandbox where they ran before (the admin confirmed it).
        if let Some(old) = current {
            delete_all(&*old.driver).await;
            old.driver.shutdown().await;
        }
        if let Ok(mut a) = self.active.write() {
            *a = Some(Active { driver, run, place });
        }
        Ok(())
    }

    /// The registries' trust for the read-only proxy: the host's bundle and the admin's
    /// extra authority, read once.
    fn upstream_trust(&self) -> Result<UpstreamTrust, SandboxError> {
        self.upstream_trust
            .get_or_init(|| {
                let extra: Vec<&std::path::Path> = self.registry_ca.iter().map(PathBuf::as_path).collect();
                UpstreamTrust::system(&extra)
            })
            .clone()
    }

    /// What the sandboxes may reach under these settings. In registries mode the
    /// registries are read-only (downloads only); without a trust to check them against,
    /// the sandboxes get no network rather than an unchecked one.
    fn network(&self, settings: &SandboxSettings) -> Option<Network> {
        let mut hosts = match settings.network {
            NetworkMode::Off => return None,
            NetworkMode::Registries | NetworkMode::Hosts => self.registries().hosts.clone(),
        };
        if settings.network == NetworkMode::Hosts {
            hosts.extend(settings.hosts.iter().filter(|h| !hosts.contains(h)).cloned().collect::<Vec<_>>());
        }
        let trusted = settings.trusted_egress.iter().filter_map(|c| Cidr::parse(c)).collect();
        let proxy = format!("http://127.0.0.1:{}", lens_sandbox::PROXY_PORT);
        let mut env: Vec<(String, String)> = ["HTTPS_PROXY", "https_proxy", "HTTP_PROXY", "http_proxy"]
            .iter()
            .map(|k| (k.to_string(), proxy.clone()))
            .collect();
        env.push(("NO_PROXY".into(), "localhost,127.0.0.1".into()));
        env.extend(sandbox_env(self.registries()));
        let read_only = match settings.network {
            NetworkMode::Registries => match self.upstream_trust() {
                Ok(trust) => Some(trust),
                Err(reason) => {
                    tracing::error!(%reason, "the sandboxes get no network");
                    return None;
                }
            },
            _ => None,
        };
        Some(Network { policy: EgressPolicy { hosts, trusted }, env, read_only })
    }
}

/// Whose conversation `chat_id` is, with their groups' share of the sandboxes (none when
/// the site's share is theirs: no stored group names them, they are an admin, or their
/// groups could not be read just now).
async fn owner_of(store: &Store, config: &Config, chat_id: &str) -> Option<lens_sandbox::Owner> {
    let user_id = store.chat_owner(chat_id).await.ok().flatten()?;
    let share = group_share(store, config, user_id).await.unwrap_or_else(|e| {
        tracing::warn!(error = %e, "a person's groups could not be read; the site's share is theirs");
        None
    });
    Some(lens_sandbox::Owner { person: user_id.to_string(), share })
}

/// The share of the sandboxes `user_id`'s groups give them, if any does.
async fn group_share(store: &Store, config: &Config, user_id: i64) -> Result<Option<usize>, AppError> {
    let Some((rules, _)) = crate::groups::binding_rules(store, user_id).await? else { return Ok(None) };
    let site = SandboxSettings::load(config, store).await?.admission().per_person as u64;
    Ok(usize::try_from(crate::groups::widest(&rules, site).max_running).ok())
}

async fn delete_all(driver: &dyn SandboxDriver) {
    for sandbox in driver.list().await.unwrap_or_default() {
        if let Err(e) = driver.delete(&sandbox.chat_id).await {
            tracing::warn!(sandbox = %sandbox.name, error = %e, "deleting a sandbox failed");
        }
    }
}

/// A driver that would not start, as the admin's refusal.
fn conflict(e: SandboxError) -> AppError {
    AppError::Conflict(e.to_string())
}

/// Turns the sandbox on at start if the settings say so. When an operator forced it on
/// (`--sandbox`) and it cannot run, the server does not start, and says why.
pub async fn start(hub: &Arc<SandboxHub>) -> anyhow::Result<()> {
    let settings = hub.settings().await.map_err(|e| anyhow::anyhow!("{e}"))?;
    if settings.network != NetworkMode::Off {
        hub.find_registries().await;
    }
    match hub.apply(&settings).await {
        Ok(()) if settings.enabled && settings.backend == SandboxBackend::Gateway => tracing::info!(
            network = settings.network.as_str(),
            gateway = %settings.gateway_address,
            "the code sandbox is on (an OpenShell gateway)"
        ),
        Ok(()) if settings.enabled => {
            tracing::info!(network = settings.network.as_str(), "the code sandbox is on (bubblewrap on this machine)")
        }
        Ok(()) => tracing::info!("the code sandbox is off; an admin can turn it on in Settings > Code sandbox"),
        Err(reason) if hub.config.sandbox == Some(true) => anyhow::bail!(reason.to_string()),
        Err(reason) => tracing::error!(%reason, "the code sandbox stays off"),
    }
    Ok(())
}

/// Stops every sandbox as the server goes down (the workspaces stay).
pub async fn shutdown(hub: &SandboxHub) {
    if let Some(driver) = hub.driver() {
        driver.shutdown().await;
    }
}

/// `sandbox` as the cluster sees it: a replica's lease on it, held until `until` (ms),
/// counts as use, now or until then.
pub fn count_lease(sandbox: &mut SandboxInfo, until: i64, now: i64) {
    sandbox.busy |= until > now;
    sandbox.idle_secs = sandbox.idle_secs.min(u64::try_from(now - until).unwrap_or(0) / 1000);
}

/// When [`tidy`] deletes `sandbox` if nothing uses it until then (ms): a running one is
/// stopped after the idle time first, and a stopped one goes the unused days after.
pub fn deleted_if_unused(sandbox: &SandboxInfo, settings: &SandboxSettings, now: i64) -> Option<i64> {
    let last_used = now - sandbox.idle_secs as i64 * 1000;
    let days = settings.unused_delete_days as i64 * 86_400_000;
    match sandbox.state {
        SandboxState::Running => Some(last_used + settings.idle_stop_secs as i64 * 1000 + days),
        SandboxState::Stopped => Some(last_used + days),
        _ => None,
    }
}

/// One pass of the routines: stop idle sandboxes, delete unused ones and those whose
/// conversation is gone. Returns (stopped, deleted).
pub async fn tidy(hub: &SandboxHub) -> (usize, usize) {
    let Some(driver) = hub.driver() else { return (0, 0) };
    let Ok(settings) = hub.settings().await else { return (0, 0) };
    let (mut stopped, mut deleted) = (0, 0);
    // Which replica drove each sandbox last, and until when (several replicas): one
    // driven by another is not idle for this one's not having used it.
    let leases: std::collections::HashMap<String, i64> = hub
        .store
        .leases(crate::cluster::SANDBOX_LEASES)
        .await
        .unwrap_or_default()
        .into_iter()
        .map(|(name, lease)| (name.trim_start_matches(crate::cluster::SANDBOX_LEASES).to_owned(), lease.expires_at))
        .collect();
    let now = crate::now_ms();
    for mut sandbox in driver.list().await.unwrap_or_default() {
        if let Some(&until) = leases.get(&sandbox.chat_id) {
            count_lease(&mut sandbox, until, now);
        }
        let orphan = matches!(hub.store.chat_exists(&sandbox.chat_id).await, Ok(false));
        let unused =
            sandbox.state == SandboxState::Stopped && sandbox.idle_secs >= settings.unused_delete_days * 86_400;
        if orphan || unused {
            if driver.delete(&sandbox.chat_id).await.is_ok() {
                deleted += 1;
                tracing::info!(sandbox = %sandbox.name, orphan, "deleted a sandbox");
            }
            continue;
        }
        let idle =
            sandbox.state == SandboxState::Running && !sandbox.busy && sandbox.idle_secs >= settings.idle_stop_secs;
        if idle && driver.stop(&sandbox.chat_id).await.is_ok() {
            stopped += 1;
            tracing::info!(sandbox = %sandbox.name, "stopped an idle sandbox (its files are kept)");
        }
    }
    (stopped, deleted)
}

/// Settings pairs as the store takes them.
fn refs(pairs: &[(String, Option<String>)]) -> Vec<(&str, Option<String>)> {
    pairs.iter().map(|(k, v)| (k.as_str(), v.clone())).collect()
}
