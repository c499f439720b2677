//! The egress proxy's inside half: listens on the sandbox's loopback, reads each
//! connection's request head, and asks the server, which decides, connects and relays.
//! The agent never resolves a name or opens a socket to the outside itself: the sandbox
//! has no network but loopback, so the server's side is the only way out.

use std::{
    collections::HashMap,
    io::{Read, Write},
    net::{Shutdown, TcpListener, TcpStream},
    sync::{
        Arc, Mutex,
        atomic::{AtomicU64, Ordering},
        mpsc,
    },
    thread,
    time::Duration,
};

use lens_sandbox_agent::protocol::{NET_IDS, Reply};

/// What the server says about one connection.
pub enum NetMessage {
    Open { ok: bool, message: String },
    Data(Vec<u8>),
    Close,
}

/// Open connections: id → where the server's messages for it go.
#[derive(Default)]
pub struct Proxy {
    conns: Mutex<HashMap<u64, mpsc::Sender<NetMessage>>>,
    next: AtomicU64,
}

/// The longest request head the proxy reads.
const MAX_HEAD: usize = 16 * 1024;

impl Proxy {
    /// Passes a server message to its connection (dropped if it is gone).
    pub fn deliver(&self, id: u64, message: NetMessage) {
        let to = self.conns.lock().ok().and_then(|c| c.get(&id).cloned());
        if let Some(to) = to {
            let _ = to.send(message);
        }
    }

    /// Listens on `port`; every connection gets a thread. `reply` sends a frame to the server.
    pub fn listen(self: &Arc<Self>, port: u16, reply: Arc<dyn Fn(&Reply) + Send + Sync>) -> std::io::Result<()> {
        let listener = TcpListener::bind(("127.0.0.1", port))?;
        let proxy = self.clone();
        thread::spawn(move || {
            for stream in listener.incoming().flatten() {
                let id = NET_IDS + proxy.next.fetch_add(1, Ordering::Relaxed);
                let (tx, rx) = mpsc::channel();
                if let Ok(mut c) = proxy.conns.lock() {
                    c.insert(id, tx);
                }
                let (proxy, reply) = (proxy.clone(), reply.clone());
                thread::spawn(move || {
                    serve(id, stream, rx, &*reply);
                    if let Ok(mut c) = proxy.conns.lock() {
                        c.remove(&id);
                    }
                });
            }
        });
        Ok(())
    }
}

fn serve(id: u64, mut stream: TcpStream, rx: mpsc::Receiver<NetMessage>, reply: &(dyn Fn(&Reply) + Send + Sync)) {
    let _ = stream.set_read_timeout(Some(Duration::from_secs(30)));
    let Some((method, target, rest)) = read_head(&mut stream) else {
        let _ = stream.write_all(b"HTTP/1.1 400 Bad Request\r\nConnection: close\r\n\r\n");
        return;
    };
    reply(&Reply::NetConnect { id, method, target });
    let decision = rx.recv_timeout(Duration::from_secs(30));
    match decision {
        Ok(NetMessage::Open { ok: true, .. }) => {}
        Ok(NetMessage::Open { ok: false, message }) => {
            let body = format!("Lens refused this connection: {message}\n");
            let head = format!(
                "HTTP/1.1 403 Forbidden\r\nContent-Type: text/plain; charset=utf-8\r\nContent-Length: {}\r\nConnection: close\r\n\r\n",
                body.len()
            );
            let _ = stream.write_all(head.as_bytes());
            let _ = stream.write_all(body.as_bytes());
            return;
        }
        _ => {
            let _ = stream.write_all(b"HTTP/1.1 504 Gateway Timeout\r\nConnection: close\r\n\r\n");
            return;
        }
    }
    if stream.write_all(b"HTTP/1.1 200 Connection established\r\n\r\n").is_err() {
        reply(&Reply::NetClose { id });
        return;
    }
    let _ = stream.set_read_timeout(None);
    if !rest.is_empty() {
        reply(&Reply::NetData { id, data: rest });
    }
    // Server → program on its own thread; program → server here.
    let Ok(mut writer) = stream.try_clone() else { return };
    thread::spawn(move || {
        while let Ok(NetMessage::Data(bytes)) = rx.recv() {
            if writer.write_all(&bytes).is_err() {
                break;
            }
        }
        // The far end closed (or the connection is gone): the program sees its end.
        let _ = writer.shutdown(Shutdown::Both);
    });
    let mut buf = vec![0u8; 32 * 1024];
    while let Ok(n @ 1..) = stream.read(&mut buf) {
        reply(&Reply::NetData { id, data: buf[..n].to_vec() });
    }
    reply(&Reply::NetClose { id });
}

/// Reads the request head: (method, target, bytes after the head).
fn read_head(stream: &mut TcpStream) -> Option<(String, String, Vec<u8>)> {
    let mut head = Vec::new();
    let mut buf = [0u8; 4096];
    let end = loop {
        let n = stream.read(&mut buf).ok().filter(|n| *n > 0)?;
        head.extend_from_slice(&buf[..n]);
        if let Some(end) = head.windows(4).position(|w| w == b"\r\n\r\n") {
            break end + 4;
        }
        if head.len() > MAX_HEAD {
            return None;
        }
    };
    let line = String::from_utf8_lossy(&head[..end]).lines().next()?.to_string();
    let mut words = line.split_whitespace();
    let method = words.next()?.to_string();
    let target = words.next()?.to_string();
    Some((method, target, head[end..].to_vec()))
}
