//! A data directory in a private folder (a home folder of mode 0700): the sandbox runs,
//! and where it truly cannot, the driver and the check name the folder and the fix.

mod common;

use std::{os::unix::fs::PermissionsExt, time::Duration};

use common::{agent, bash};
use lens_sandbox::{LocalDriver, LocalOptions, SandboxDriver};

/// A fresh folder only its owner may enter, as most home folders are.
fn private_folder() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    std::fs::set_permissions(dir.path(), std::fs::Permissions::from_mode(0o700)).unwrap();
    dir
}

#[tokio::test]
async fn a_data_directory_under_a_private_folder_runs_code_and_keeps_its_files() {
    let home = private_folder();
    let root = home.path().join("lens-data/sandboxes");
    // Built in a clone in the home folder too, as `make run` there does.
    let built = home.path().join("lens/target/release/lens-sandbox-agent");
    std::fs::create_dir_all(built.parent().unwrap()).unwrap();
    std::fs::copy(agent(), &built).unwrap();
    let d = LocalDriver::new(LocalOptions::new(&root, &built)).unwrap();
    let (out, err, _) = bash(&d, "home", "echo kept > notes.txt; cat notes.txt; pwd", Duration::from_secs(30)).await;
    assert_eq!(out, "kept\n/workspace\n", "stderr: {err}");
    d.stop("home").await.unwrap();
    let (out, _, _) = bash(&d, "home", "cat notes.txt", Duration::from_secs(30)).await;
    assert_eq!(out, "kept\n", "the workspace outlives its sandbox");
    d.delete("home").await.unwrap();
    assert_eq!(std::fs::metadata(home.path()).unwrap().permissions().mode() & 0o777, 0o700, "the home stays private");
}

#[tokio::test]
async fn mounts_the_sandbox_cannot_reach_are_named_with_owner_mode_and_fix() {
    if !nix::unistd::geteuid().is_root() {
        // A Lens that is not root runs sandboxes as its own user, who can reach its folders.
        return;
    }
    let home = private_folder();
    let mut options = LocalOptions::new(&home.path().join("lens-data/sandboxes"), &agent());
    options.mounts = Some(home.path().join("mounts"));
    let why = format!("cannot pass through {} (owner root, mode 0700)", home.path().display());
    let fix = format!("`chmod o+x {}`", home.path().display());

    let refused = LocalDriver::new(options.clone()).err().expect("the driver refuses to start").to_string();
    assert!(refused.contains(&why) && refused.contains(&fix), "{refused}");
    assert!(!refused.contains("bubblewrap"), "no guess about bubblewrap: {refused}");

    let check = lens_sandbox::check(&options).await;
    assert!(!check.ok);
    let folders = check.items.iter().find(|i| i.name == "folders").expect("a folders item");
    assert!(!folders.ok && folders.detail.contains(&why) && folders.detail.contains(&fix), "{folders:?}");

    // Made passable, the same options work.
    std::fs::set_permissions(home.path(), std::fs::Permissions::from_mode(0o711)).unwrap();
    let d = LocalDriver::new(options).unwrap();
    let (out, _, _) = bash(&d, "after", "echo ok", Duration::from_secs(30)).await;
    assert_eq!(out, "ok\n");
}

#[tokio::test]
async fn a_sandbox_that_ends_while_starting_says_why_in_bubblewraps_words() {
    let dir = tempfile::tempdir().unwrap();
    let broken = dir.path().join("not-an-agent");
    std::fs::write(&broken, "this is not a program\n").unwrap();
    let d = LocalDriver::new(LocalOptions::new(&dir.path().join("sandboxes"), &broken)).unwrap();
    let said = d.ensure("broken").await.expect_err("it cannot start").to_string();
    // What the sandbox printed as it failed (here the shell that tried the text file).
    assert!(said.contains("the sandbox ended while starting: /.lens/agent: 1: this: not found"), "{said}");
    assert!(!said.contains("allowed here"), "no guess: {said}");
}
