//! What each person's answers cost, summed from the tokens saved with them.

use lens_types::UsageRow;

use super::StoreError;

/// The `usage` table, as every store implements it.
#[async_trait::async_trait]
pub trait UsageTable: Send + Sync {
    /// Each person's answers since `since` (ms) that carry a token count, most tokens first.
    async fn usage_since(&self, since: i64) -> Result<Vec<UsageRow>, StoreError>;
}
