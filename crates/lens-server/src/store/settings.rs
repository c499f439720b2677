//! Admin settings as key/value rows.

use super::{AuditNote, StoreError};

/// The `settings` table, as every store implements it.
#[async_trait::async_trait]
pub trait SettingTable: Send + Sync {
    async fn setting(&self, key: &str) -> Result<Option<String>, StoreError>;

    /// Writes several settings in one transaction (`None` deletes the key), with the
    /// admin's change recorded in `audit`.
    async fn set_settings(&self, pairs: &[(&str, Option<String>)], audit: &[AuditNote]) -> Result<(), StoreError>;
}
