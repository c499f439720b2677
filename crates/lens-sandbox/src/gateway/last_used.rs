//! When each gateway sandbox was last used, kept in a file of Lens's: the gateway has no
//! field Lens may update after a sandbox is made, and a stopped sandbox cannot be asked.
//! Without it, a server restarted would take a sandbox made long ago but used yesterday
//! for unused, and delete it.

use std::{
    collections::HashMap,
    path::PathBuf,
    sync::Mutex,
    time::{Duration, Instant, SystemTime, UNIX_EPOCH},
};

/// How often the record is written at most while sandboxes are used.
const WRITE_EVERY: Duration = Duration::from_secs(5);

pub(crate) struct LastUsed {
    file: Option<PathBuf>,
    /// Sandbox name → seconds since 1970.
    seen: Mutex<HashMap<String, u64>>,
    written: Mutex<Option<Instant>>,
}

fn now_secs() -> u64 {
    SystemTime::now().duration_since(UNIX_EPOCH).map(|d| d.as_secs()).unwrap_or(0)
}

impl LastUsed {
    /// Reads the record at `file`, if any (an unreadable one is started afresh).
    pub(crate) fn open(file: Option<PathBuf>) -> Self {
        let seen = file
            .as_ref()
            .and_then(|f| std::fs::read(f).ok())
            .and_then(|bytes| serde_json::from_slice::<HashMap<String, u64>>(&bytes).ok())
            .unwrap_or_default();
        Self { file, seen: Mutex::new(seen), written: Mutex::new(None) }
    }

    /// Records a use now; written to the file at most every few seconds.
    pub(crate) fn touch(&self, name: &str) {
        if let Ok(mut seen) = self.seen.lock() {
            seen.insert(name.to_owned(), now_secs());
        }
        let due = self.written.lock().map(|w| w.is_none_or(|t| t.elapsed() >= WRITE_EVERY)).unwrap_or(false);
        if due {
            self.write();
        }
    }

    pub(crate) fn forget(&self, name: &str) {
        if let Ok(mut seen) = self.seen.lock() {
            seen.remove(name);
        }
        self.write();
    }

    /// When it was last used, as far as this server (and the ones before it) saw.
    pub(crate) fn get(&self, name: &str) -> Option<SystemTime> {
        let secs = self.seen.lock().ok()?.get(name).copied()?;
        Some(UNIX_EPOCH + Duration::from_secs(secs))
    }

    /// Writes the record whole (a temporary file renamed over it: never half a file).
    pub(crate) fn write(&self) {
        let Some(file) = &self.file else { return };
        let Ok(bytes) = self.seen.lock().map(|seen| serde_json::to_vec(&*seen).unwrap_or_default()) else { return };
        let tmp = file.with_extension("tmp");
        let written = std::fs::write(&tmp, bytes).and_then(|()| std::fs::rename(&tmp, file));
        if let Err(e) = written {
            tracing::warn!(error = %e, "the gateway sandboxes' last-used record could not be written");
        }
        if let Ok(mut w) = self.written.lock() {
            *w = Some(Instant::now());
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_record_survives_a_restart_and_a_broken_file_starts_afresh() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("gateway-last-used.json");
        let first = LastUsed::open(Some(file.clone()));
        first.touch("lens-chat-a");
        let again = LastUsed::open(Some(file.clone()));
        assert!(again.get("lens-chat-a").unwrap().elapsed().unwrap() < Duration::from_secs(60));
        again.forget("lens-chat-a");
        assert!(LastUsed::open(Some(file.clone())).get("lens-chat-a").is_none());
        std::fs::write(&file, b"{not json").unwrap();
        assert!(LastUsed::open(Some(file)).get("lens-chat-a").is_none());
    }
}
