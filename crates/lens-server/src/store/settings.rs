//! Admin settings as key/value rows.

use super::StoreError;

/// The `settings` table, as every store implements it.
#[async_trait::async_trait]
pub trait SettingTable: Send + Sync {
    async fn setting(&self, key: &str) -> Result<Option<String>, StoreError>;

    /// Writes several settings in one transaction (`None` deletes the key).
    async fn set_settings(&self, pairs: &[(&str, Option<String>)]) -> Result<(), StoreError>;
}
