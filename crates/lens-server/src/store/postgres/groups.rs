//! Groups and their members.

use super::Postgres;
use crate::now_ms;
use crate::store::groups::provider_members;
use crate::store::{AuditNote, GroupRow, GroupTable, StoreError};

#[async_trait::async_trait]
impl GroupTable for Postgres {
    async fn groups(&self) -> Result<Vec<GroupRow>, StoreError> {
        let groups: Vec<(String, String)> =
            sqlx::query_as("SELECT name, rules FROM groups ORDER BY name").fetch_all(&self.pool).await?;
        let members: Vec<(String, String)> = sqlx::query_as(
            "SELECT m.group_name, u.username FROM group_members m JOIN users u ON u.id = m.user_id
             ORDER BY u.username",
        )
        .fetch_all(&self.pool)
        .await?;
        let identities: Vec<(String, String)> = sqlx::query_as(
            "SELECT u.username, i.groups FROM identities i JOIN users u ON u.id = i.user_id ORDER BY u.username",
        )
        .fetch_all(&self.pool)
        .await?;
        let mut rows: Vec<GroupRow> = groups
            .into_iter()
            .map(|(name, rules)| GroupRow {
                members: members.iter().filter(|(g, _)| *g == name).map(|(_, u)| u.clone()).collect(),
                provider_members: Vec::new(),
                name,
                rules,
            })
            .collect();
        provider_members(&mut rows, &identities);
        Ok(rows)
    }

    async fn put_group(&self, name: &str, rules: &str, members: &[i64], audit: &[AuditNote]) -> Result<(), StoreError> {
        let mut tx = self.pool.begin().await?;
        sqlx::query(
            "INSERT INTO groups (name, rules, updated_at) VALUES ($1, $2, $3)
             ON CONFLICT (name) DO UPDATE SET rules = $2, updated_at = $3",
        )
        .bind(name)
        .bind(rules)
        .bind(now_ms())
        .execute(&mut *tx)
        .await?;
        sqlx::query("DELETE FROM group_members WHERE group_name = $1").bind(name).execute(&mut *tx).await?;
        for user_id in members {
            sqlx::query("INSERT INTO group_members (group_name, user_id) VALUES ($1, $2) ON CONFLICT DO NOTHING")
                .bind(name)
                .bind(user_id)
                .execute(&mut *tx)
                .await?;
        }
        super::audit::write(&mut tx, audit).await?;
        Ok(tx.commit().await?)
    }

    async fn delete_group(&self, name: &str, audit: &[AuditNote]) -> Result<bool, StoreError> {
        let mut tx = self.pool.begin().await?;
        let gone =
            sqlx::query("DELETE FROM groups WHERE name = $1").bind(name).execute(&mut *tx).await?.rows_affected();
        if gone == 0 {
            return Ok(false);
        }
        super::audit::write(&mut tx, audit).await?;
        tx.commit().await?;
        Ok(true)
    }

    async fn groups_of(&self, user_id: i64) -> Result<Vec<(String, String)>, StoreError> {
        // One query: `everyone`, the groups they are a member of, and those any identity
        // of theirs was named in at its last sign-in.
        Ok(sqlx::query_as(
            "SELECT g.name, g.rules FROM groups g
             WHERE g.name = $2
                OR g.name IN (SELECT group_name FROM group_members WHERE user_id = $1)
                OR EXISTS (SELECT 1 FROM identities i WHERE i.user_id = $1 AND i.groups::jsonb ? g.name)
             ORDER BY g.name <> $2, g.name COLLATE \"C\"",
        )
        .bind(user_id)
        .bind(lens_types::EVERYONE)
        .fetch_all(&self.pool)
        .await?)
    }
}
