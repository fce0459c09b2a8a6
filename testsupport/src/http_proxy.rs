//! A small forward HTTP proxy on 127.0.0.1 for the proxy tests (std only, no `CONNECT`): it
//! takes absolute-form requests (`GET http://host:port/path HTTP/1.1`), sends them on to
//! `host:port` in origin form and copies the answer back, one request per connection. Every
//! request's target is logged.

use std::io::{BufRead, BufReader, Read, Write};
use std::net::{SocketAddr, TcpListener, TcpStream};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

/// The proxy; stopped when dropped.
pub struct HttpProxy {
    addr: SocketAddr,
    log: Arc<Mutex<Vec<String>>>,
    stop: Arc<AtomicBool>,
}

impl HttpProxy {
    /// Starts a proxy on a free port of 127.0.0.1.
    pub fn start() -> HttpProxy {
        let listener = TcpListener::bind("127.0.0.1:0").expect("bind 127.0.0.1");
        let addr = listener.local_addr().expect("local address");
        let log = Arc::new(Mutex::new(Vec::new()));
        let stop = Arc::new(AtomicBool::new(false));
        let (l, st) = (log.clone(), stop.clone());
        std::thread::spawn(move || {
            for conn in listener.incoming() {
                if st.load(Ordering::Relaxed) {
                    break;
                }
                let Ok(conn) = conn else { continue };
                let l = l.clone();
                std::thread::spawn(move || {
                    let _ = forward(conn, &l);
                });
            }
        });
        HttpProxy { addr, log, stop }
    }

    /// `http://127.0.0.1:PORT`, the value of `HTTP_PROXY`.
    pub fn url(&self) -> String {
        format!("http://{}", self.addr)
    }

    /// The absolute URLs requested through the proxy so far.
    pub fn log(&self) -> Vec<String> {
        self.log.lock().unwrap().clone()
    }
}

impl Drop for HttpProxy {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::Relaxed);
        let _ = TcpStream::connect_timeout(&self.addr, Duration::from_millis(200));
    }
}

/// One request: read in absolute form, sent on in origin form, the answer copied back.
fn forward(conn: TcpStream, log: &Mutex<Vec<String>>) -> std::io::Result<()> {
    conn.set_read_timeout(Some(Duration::from_secs(10)))?;
    let mut reader = BufReader::new(conn.try_clone()?);
    let mut line = String::new();
    reader.by_ref().take(8192).read_line(&mut line)?;
    let mut parts = line.split_whitespace();
    let (method, target) = (parts.next().unwrap_or(""), parts.next().unwrap_or(""));
    let mut client = conn;
    let Some(rest) = target.strip_prefix("http://") else {
        // CONNECT or an origin-form request: not what this proxy does.
        let _ = client.write_all(b"HTTP/1.1 501 Not Implemented\r\nConnection: close\r\n\r\n");
        return Ok(());
    };
    log.lock().unwrap().push(target.to_string());
    let (authority, path) = match rest.find('/') {
        Some(i) => (&rest[..i], &rest[i..]),
        None => (rest, "/"),
    };
    let mut upstream = TcpStream::connect(authority)?;
    let mut head = format!("{method} {path} HTTP/1.1\r\nConnection: close\r\n");
    loop {
        let mut h = String::new();
        if reader.by_ref().take(8192).read_line(&mut h)? == 0 || h.trim().is_empty() {
            break;
        }
        let name = h
            .split(':')
            .next()
            .unwrap_or("")
            .trim()
            .to_ascii_lowercase();
        if !matches!(
            name.as_str(),
            "connection" | "proxy-connection" | "keep-alive"
        ) {
            head.push_str(&h);
        }
    }
    head.push_str("\r\n");
    upstream.write_all(head.as_bytes())?;
    std::io::copy(&mut upstream, &mut client)?;
    let _ = client.shutdown(std::net::Shutdown::Both);
    Ok(())
}
