//! A contained sandbox's filesystem policy, applied as the supervisor applies it
//! (`openshell-supervisor-process`, `sandbox/linux/landlock.rs`, commit 2f7fb6559):
//! Landlock ABI 2 handling every right it has; `read_only` paths may be read and run,
//! `read_write` paths (and the working folder, with `include_workdir`) everything;
//! a file gets only a file's rights; no paths at all, no Landlock. Under the
//! `hard_requirement` compatibility a listed path that is missing stops the command
//! (`best_effort` skips it). Everything else in the container is out of reach: a policy
//! that leaves `/dev/null` out leaves every `> /dev/null` refused.
//!
//! bubblewrap cannot run under Landlock (a Landlock domain may not mount), so a small
//! Python program inside the container applies it and then becomes the command.

use crate::proto::openshell::sandbox::v1::SandboxPolicy;

/// `python3 -c APPLY HARD N ro... rw... -- command...`: applies the rules, then execs.
const APPLY: &str = r#"
import ctypes, os, stat, sys
libc = ctypes.CDLL(None, use_errno=True)
CREATE, ADD, RESTRICT, PATH_BENEATH = 444, 445, 446, 1
EXECUTE, WRITE_FILE, READ_FILE, READ_DIR = 1, 2, 4, 8
ALL = (1 << 14) - 1  # ABI 2: through REFER
READ = EXECUTE | READ_FILE | READ_DIR
FILE = EXECUTE | WRITE_FILE | READ_FILE
class Attr(ctypes.Structure):
    _fields_ = [("handled_access_fs", ctypes.c_uint64)]
class Beneath(ctypes.Structure):
    _pack_ = 1
    _fields_ = [("allowed_access", ctypes.c_uint64), ("parent_fd", ctypes.c_int32)]
def fail(what):
    sys.stderr.write("landlock: %s\n" % what)
    sys.exit(126)
hard, n = sys.argv[1] == "1", int(sys.argv[2])
paths = sys.argv[3:sys.argv.index("--")]
command = sys.argv[sys.argv.index("--") + 1:]
attr = Attr(ALL)
ruleset = libc.syscall(CREATE, ctypes.byref(attr), ctypes.c_size_t(ctypes.sizeof(attr)), 0)
if ruleset < 0:
    fail("the kernel has no Landlock (errno %d)" % ctypes.get_errno())
for i, path in enumerate(paths):
    try:
        fd = os.open(path, os.O_PATH | os.O_CLOEXEC)
    except FileNotFoundError:
        if hard:
            fail("path %s does not exist (hard_requirement)" % path)
        continue
    rights = READ if i < n else ALL
    if not stat.S_ISDIR(os.fstat(fd).st_mode):
        rights &= FILE
    rule = Beneath(rights, fd)
    if libc.syscall(ADD, ruleset, PATH_BENEATH, ctypes.byref(rule), 0) != 0:
        fail("cannot add %s (errno %d)" % (path, ctypes.get_errno()))
    os.close(fd)
if libc.prctl(38, 1, 0, 0, 0) != 0 or libc.syscall(RESTRICT, ruleset, 0) != 0:
    fail("cannot restrict itself (errno %d)" % ctypes.get_errno())
os.close(ruleset)
os.execvp(command[0], command)
"#;

/// What runs in the container before the command to put `policy`'s paths in force
/// (`workdir` is the sandbox's, `/sandbox`); `None` when the policy lists none.
pub(crate) fn wrap(policy: Option<&SandboxPolicy>, workdir: &str) -> Option<Vec<String>> {
    let fs = policy?.filesystem.as_ref()?;
    if fs.read_only.is_empty() && fs.read_write.is_empty() {
        return None;
    }
    let mut read_write = fs.read_write.clone();
    if fs.include_workdir && !read_write.iter().any(|p| p == workdir) {
        read_write.push(workdir.to_owned());
    }
    let hard = policy?.landlock.as_ref().is_some_and(|l| l.compatibility == "hard_requirement");
    let mut args = vec!["python3".to_owned(), "-c".to_owned(), APPLY.to_owned(), u8::from(hard).to_string()];
    args.push(fs.read_only.len().to_string());
    args.extend(fs.read_only.iter().cloned());
    args.extend(read_write);
    args.push("--".to_owned());
    Some(args)
}
