//! `lens move-data`: a single machine's install copied into PostgreSQL and an
//! S3-compatible bucket, the data directory left as it is. Each part can be moved alone;
//! a second run goes on where a stopped one ended; the end compares counts and
//! checksums, and says what differs.

use std::fmt::Write;

use anyhow::{Context, bail};

use crate::{
    config::MoveData,
    files::{
        blobs::{LocalBlobs, S3Blobs},
        copy::{FilesCopy, copy_all},
    },
    store::copy::{TableCopy, sqlite_to_postgres},
};

/// What a move did, part by part.
#[derive(Debug, Default)]
pub struct Moved {
    pub tables: Vec<TableCopy>,
    pub files: Option<FilesCopy>,
}

impl Moved {
    /// Whether every table and file in the target matches the source.
    pub fn same(&self) -> bool {
        self.tables.iter().all(|t| t.same) && self.files.as_ref().is_none_or(|f| f.different.is_empty())
    }

    /// A line per table and one for the files.
    pub fn report(&self) -> String {
        let mut out = String::new();
        for t in &self.tables {
            let verdict = if t.same { "same in both" } else { "DIFFERS" };
            let _ = writeln!(out, "{:<12} {:>8} rows, {:>8} copied now, {verdict}", t.table, t.rows, t.inserted);
        }
        if let Some(f) = &self.files {
            let verdict = if f.different.is_empty() {
                "same in both".to_owned()
            } else {
                format!("DIFFER: {}", f.different.join(", "))
            };
            let _ = writeln!(
                out,
                "{:<12} {:>8} files ({} bytes), {:>8} copied now, {verdict}",
                "files", f.files, f.bytes, f.copied
            );
        }
        out
    }
}

/// Moves what `args` names; the source is only read.
pub async fn move_data(args: &MoveData) -> anyhow::Result<Moved> {
    if args.to_database.is_none() && args.to_files.is_none() {
        bail!("say where to: --to-database postgres://... and/or --to-files s3://bucket/prefix");
    }
    let db = args.data_dir.join("lens.db");
    if !db.is_file() {
        bail!("{} is not a Lens data directory (no lens.db)", args.data_dir.display());
    }
    let mut moved = Moved::default();
    if let Some(url) = &args.to_database {
        moved.tables = sqlite_to_postgres(&db, url.expose()).await.context("copying the records")?;
    }
    if let Some(url) = &args.to_files {
        let target = S3Blobs::from_url(url).context("opening the bucket")?;
        let source = LocalBlobs::new(&args.data_dir);
        moved.files = Some(copy_all(&source, &target).await.context("copying the files")?);
    }
    Ok(moved)
}
