//! A small threaded HTTP/1.1 server on 127.0.0.1 with the HuggingFace Hub's layout, for the
//! `--remote` tests (std only):
//!
//! * `GET /api/models/{org}/{name}/revision/{rev}`: `{"sha": commit, "siblings": [...]}`;
//! * `GET /{org}/{name}/resolve/{rev}/{file}`: a small file whole (200, with an ETag); a
//!   `*.safetensors` file answered by a 302 to `/lfs/...` on the second host name
//!   `localhost` (the same loopback address), as the Hub sends LFS files to its CDN;
//! * `GET /lfs/{org}/{name}/{file}`: the file by ranges (206 + `Content-Range`);
//! * `GET /plain/{org}/{name}/{file}`: the same files as a plain HTTP directory (no API, no
//!   redirect): a file whole (200) without a `Range`, by ranges as `/lfs/` with one; 404
//!   for a file the repository does not hold.
//!
//! [`Faults`] make the LFS answers misbehave: a dropped connection mid-body, error statuses
//! (500, 429 with `Retry-After`) before a success, a range ignored (200 with the whole file),
//! the file replaced mid-run (its ETag changes), a redirect loop or to another scheme, a
//! `Content-Length` that lies. Every request is logged (path, host, whether it carried a
//! token) so that tests can check where credentials went.

use std::collections::BTreeMap;
use std::io::{BufRead, BufReader, Read, Write};
use std::net::{SocketAddr, TcpListener, TcpStream};
use std::path::Path;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

/// How the LFS range answers misbehave (counters count down as faults are served).
#[derive(Clone, Debug, Default)]
pub struct Faults {
    /// This many range answers close the connection after `drop_after_bytes` body bytes.
    pub drop_mid_body: usize,
    /// Body bytes sent before a dropped connection.
    pub drop_after_bytes: usize,
    /// Statuses answered (in order) before the range answers succeed, e.g. `[500, 500]`.
    pub statuses: Vec<u16>,
    /// `Retry-After` seconds sent with those statuses.
    pub retry_after: Option<u64>,
    /// Answer ranges with 200 and the whole file.
    pub ignore_range: bool,
    /// After this many range answers, the file is replaced (its ETag changes).
    pub replace_after: Option<usize>,
    /// Resolve URLs of safetensors redirect to themselves, forever.
    pub redirect_loop: bool,
    /// Resolve URLs of safetensors redirect to `https://` (another scheme).
    pub redirect_to_https: bool,
    /// Range answers declare a `Content-Length` one byte short of the range.
    pub lying_length: bool,
    /// Range answers declare `Content-Encoding: gzip` (a compressed body never asked for).
    pub gzip: bool,
    /// Range bodies trickle: 100 bytes every 50 ms.
    pub trickle: bool,
    /// Small files are answered with a body that never ends (no `Content-Length`).
    pub endless_body: bool,
    /// Every answer's header section never ends (header lines until the client leaves).
    pub endless_headers: bool,
    /// After this many range answers the server is gone: every later range request's
    /// connection is closed without an answer.
    pub die_after: Option<usize>,
}

/// One request as the server saw it.
#[derive(Clone, Debug)]
pub struct Logged {
    /// The request path.
    pub path: String,
    /// The `Host` header.
    pub host: String,
    /// Whether an `Authorization` header came with it.
    pub token: bool,
    /// The `Range` header, if any.
    pub range: Option<String>,
}

struct Repo {
    commit: String,
    files: BTreeMap<String, Arc<Vec<u8>>>,
}

struct State {
    repos: Mutex<BTreeMap<String, Repo>>,
    faults: Mutex<Faults>,
    log: Mutex<Vec<Logged>>,
    ranges_served: Mutex<usize>,
    port: Mutex<u16>,
}

/// The server; stopped when dropped.
pub struct HubServer {
    addr: SocketAddr,
    state: Arc<State>,
    stop: Arc<AtomicBool>,
}

impl HubServer {
    /// Starts a server on a free port of 127.0.0.1.
    pub fn start() -> HubServer {
        let listener = TcpListener::bind("127.0.0.1:0").expect("bind 127.0.0.1");
        let addr = listener.local_addr().expect("local address");
        let state = Arc::new(State {
            repos: Mutex::new(BTreeMap::new()),
            faults: Mutex::new(Faults::default()),
            log: Mutex::new(Vec::new()),
            ranges_served: Mutex::new(0),
            port: Mutex::new(addr.port()),
        });
        let stop = Arc::new(AtomicBool::new(false));
        let (s, st) = (state.clone(), stop.clone());
        std::thread::spawn(move || {
            for conn in listener.incoming() {
                if st.load(Ordering::Relaxed) {
                    break;
                }
                let Ok(conn) = conn else { continue };
                let s = s.clone();
                std::thread::spawn(move || {
                    let _ = serve(&s, conn);
                });
            }
        });
        HubServer { addr, state, stop }
    }

    /// `http://127.0.0.1:PORT`, the endpoint (`HF_ENDPOINT`).
    pub fn endpoint(&self) -> String {
        format!("http://{}", self.addr)
    }

    /// Serves repository `id` at `commit` (also as `main`) with `files` (path → bytes).
    pub fn add_repo(&self, id: &str, commit: &str, files: BTreeMap<String, Vec<u8>>) {
        self.state.repos.lock().unwrap().insert(
            id.to_string(),
            Repo {
                commit: commit.to_string(),
                files: files.into_iter().map(|(k, v)| (k, Arc::new(v))).collect(),
            },
        );
    }

    /// Serves the files of directory `dir` (recursively, symlinks followed) as repository `id`.
    pub fn add_dir(&self, id: &str, commit: &str, dir: &Path) {
        let mut files = BTreeMap::new();
        let mut stack = vec![dir.to_path_buf()];
        while let Some(d) = stack.pop() {
            for e in std::fs::read_dir(&d).expect("read fixture dir").flatten() {
                let p = e.path();
                if p.is_dir() {
                    stack.push(p);
                } else {
                    let rel = p
                        .strip_prefix(dir)
                        .unwrap()
                        .to_string_lossy()
                        .replace('\\', "/");
                    files.insert(rel, std::fs::read(&p).expect("read fixture file"));
                }
            }
        }
        self.add_repo(id, commit, files);
    }

    /// Sets the faults of the LFS answers.
    pub fn set_faults(&self, f: Faults) {
        *self.state.faults.lock().unwrap() = f;
    }

    /// `{endpoint}/plain/{id}/`: repository `id`'s files as a plain HTTP directory.
    pub fn plain_url(&self, id: &str) -> String {
        format!("{}/plain/{id}/", self.endpoint())
    }

    /// The requests served so far.
    pub fn log(&self) -> Vec<Logged> {
        self.state.log.lock().unwrap().clone()
    }
}

impl Drop for HubServer {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::Relaxed);
        // Wake the accept loop.
        let _ = TcpStream::connect_timeout(&self.addr, Duration::from_millis(200));
    }
}

fn respond(out: &mut TcpStream, status: &str, headers: &[(&str, String)], body: &[u8]) {
    let mut head = format!("HTTP/1.1 {status}\r\nConnection: close\r\n");
    for (k, v) in headers {
        head.push_str(&format!("{k}: {v}\r\n"));
    }
    head.push_str("\r\n");
    let _ = out.write_all(head.as_bytes());
    let _ = out.write_all(body);
    let _ = out.flush();
}

fn etag_of(bytes: &[u8], generation: usize) -> String {
    // FNV-1a of the size, the first 64 KiB and the generation: cheap for a large file, and
    // different for the files of a test and for a replaced file.
    let mut h: u64 = 0xcbf29ce484222325 ^ generation as u64 ^ ((bytes.len() as u64) << 20);
    for b in &bytes[..bytes.len().min(64 << 10)] {
        h = (h ^ *b as u64).wrapping_mul(0x100000001b3);
    }
    format!("\"{h:016x}\"")
}

/// One request: its method, its path (query removed later) and its headers, lowercased.
struct Request {
    method: String,
    path: String,
    headers: BTreeMap<String, String>,
}

/// Reads a request line and headers (each line at most 8 KiB).
fn read_request(reader: &mut BufReader<TcpStream>) -> std::io::Result<Request> {
    let mut line = String::new();
    reader.by_ref().take(8192).read_line(&mut line)?;
    let mut parts = line.split_whitespace();
    let method = parts.next().unwrap_or("").to_string();
    let path = parts.next().unwrap_or("").to_string();
    let mut headers = BTreeMap::new();
    loop {
        let mut h = String::new();
        if reader.by_ref().take(8192).read_line(&mut h)? == 0 || h.trim().is_empty() {
            break;
        }
        if let Some((k, v)) = h.split_once(':') {
            headers.insert(k.trim().to_ascii_lowercase(), v.trim().to_string());
        }
    }
    Ok(Request {
        method,
        path,
        headers,
    })
}

fn not_found(out: &mut TcpStream) -> std::io::Result<()> {
    respond(out, "404 Not Found", &[], b"not found");
    Ok(())
}

/// Answers one connection's request: the revision API, an LFS range, or a resolved file.
fn serve(state: &State, conn: TcpStream) -> std::io::Result<()> {
    conn.set_read_timeout(Some(Duration::from_secs(10)))?;
    let mut reader = BufReader::new(conn.try_clone()?);
    let mut out = conn;
    let req = read_request(&mut reader)?;
    state.log.lock().unwrap().push(Logged {
        path: req.path.clone(),
        host: req.headers.get("host").cloned().unwrap_or_default(),
        token: req.headers.contains_key("authorization"),
        range: req.headers.get("range").cloned(),
    });
    if req.method != "GET" {
        respond(&mut out, "405 Method Not Allowed", &[], b"");
        return Ok(());
    }
    if state.faults.lock().unwrap().endless_headers {
        let _ = out.write_all(b"HTTP/1.1 200 OK\r\n");
        for i in 0u64.. {
            if out
                .write_all(format!("X-Filler-{i}: {}\r\n", "x".repeat(64)).as_bytes())
                .is_err()
            {
                break;
            }
        }
        return Ok(());
    }
    let path = req.path.split('?').next().unwrap_or("").to_string();
    if let Some(rest) = path.strip_prefix("/api/models/") {
        return revision(state, rest, &mut out);
    }
    if let Some(rest) = path.strip_prefix("/lfs/") {
        return lfs(state, rest, &req.headers, &mut out);
    }
    if let Some(rest) = path.strip_prefix("/plain/") {
        if req.headers.contains_key("range") {
            return lfs(state, rest, &req.headers, &mut out);
        }
        return plain_whole(state, rest, &mut out);
    }
    resolve(state, &path, &mut out)
}

/// `/api/models/{org}/{name}/revision/{rev}`: the commit and the file list.
fn revision(state: &State, rest: &str, out: &mut TcpStream) -> std::io::Result<()> {
    let segs: Vec<&str> = rest.splitn(4, '/').collect();
    if segs.len() != 4 || segs[2] != "revision" {
        return not_found(out);
    }
    let id = format!("{}/{}", segs[0], segs[1]);
    let repos = state.repos.lock().unwrap();
    let Some(repo) = repos.get(&id) else {
        return not_found(out);
    };
    if segs[3] != "main" && segs[3] != repo.commit {
        return not_found(out);
    }
    let siblings: Vec<String> = repo
        .files
        .keys()
        .map(|f| format!("{{\"rfilename\":{f:?}}}"))
        .collect();
    let body = format!(
        "{{\"id\":{id:?},\"sha\":{:?},\"siblings\":[{}]}}",
        repo.commit,
        siblings.join(",")
    );
    respond(
        out,
        "200 OK",
        &[("Content-Type", "application/json".into())],
        body.as_bytes(),
    );
    Ok(())
}

/// The status line and headers of a 206 whose body the caller writes itself.
fn partial_head(head: &[(&str, String)]) -> String {
    let mut h = "HTTP/1.1 206 Partial Content\r\nConnection: close\r\n".to_string();
    for (k, v) in head {
        h.push_str(&format!("{k}: {v}\r\n"));
    }
    h.push_str("\r\n");
    h
}

/// `/lfs/{org}/{name}/{file}`: a byte range of a weight file, with the faults injected.
fn lfs(
    state: &State,
    rest: &str,
    headers: &BTreeMap<String, String>,
    out: &mut TcpStream,
) -> std::io::Result<()> {
    let faults = state.faults.lock().unwrap().clone();
    let segs: Vec<&str> = rest.splitn(3, '/').collect();
    if segs.len() != 3 {
        return not_found(out);
    }
    let id = format!("{}/{}", segs[0], segs[1]);
    let bytes = {
        let repos = state.repos.lock().unwrap();
        match repos.get(&id).and_then(|r| r.files.get(segs[2])) {
            Some(b) => b.clone(),
            None => return not_found(out),
        }
    };
    let served = {
        let mut n = state.ranges_served.lock().unwrap();
        *n += 1;
        *n
    };
    if faults.die_after.is_some_and(|n| served > n) {
        let _ = out.shutdown(std::net::Shutdown::Both);
        return Ok(());
    }
    let generation = match faults.replace_after {
        Some(after) if served > after => 1,
        _ => 0,
    };
    let etag = etag_of(&bytes, generation);
    {
        let mut f = state.faults.lock().unwrap();
        if !f.statuses.is_empty() {
            let status = f.statuses.remove(0);
            let mut h = vec![];
            if let Some(s) = f.retry_after {
                h.push(("Retry-After", s.to_string()));
            }
            respond(out, &format!("{status} Injected"), &h, b"injected failure");
            return Ok(());
        }
    }
    if faults.ignore_range {
        respond(
            out,
            "200 OK",
            &[("Content-Length", bytes.len().to_string()), ("ETag", etag)],
            &bytes,
        );
        return Ok(());
    }
    let size = bytes.len() as u64;
    let Some((a, b)) = headers.get("range").and_then(|r| parse_range(r, size)) else {
        respond(
            out,
            "416 Range Not Satisfiable",
            &[("Content-Range", format!("bytes */{size}"))],
            b"",
        );
        return Ok(());
    };
    let body = &bytes[a as usize..=b as usize];
    let declared = if faults.lying_length {
        body.len() - 1
    } else {
        body.len()
    };
    let mut head = vec![
        ("Content-Range", format!("bytes {a}-{b}/{size}")),
        ("Content-Length", declared.to_string()),
        ("ETag", etag),
        ("Accept-Ranges", "bytes".into()),
    ];
    if faults.gzip {
        head.push(("Content-Encoding", "gzip".into()));
    }
    let drop_now = {
        let mut f = state.faults.lock().unwrap();
        if f.drop_mid_body > 0 && body.len() > f.drop_after_bytes {
            f.drop_mid_body -= 1;
            true
        } else {
            false
        }
    };
    if drop_now {
        let _ = out.write_all(partial_head(&head).as_bytes());
        let _ = out.write_all(&body[..faults.drop_after_bytes]);
        let _ = out.flush();
        let _ = out.shutdown(std::net::Shutdown::Both);
        return Ok(());
    }
    if faults.trickle {
        let _ = out.write_all(partial_head(&head).as_bytes());
        for piece in body.chunks(100) {
            if out.write_all(piece).and_then(|_| out.flush()).is_err() {
                break;
            }
            std::thread::sleep(Duration::from_millis(50));
        }
        return Ok(());
    }
    respond(out, "206 Partial Content", &head, body);
    Ok(())
}

/// `/plain/{org}/{name}/{file}` without a range: the file whole.
fn plain_whole(state: &State, rest: &str, out: &mut TcpStream) -> std::io::Result<()> {
    let segs: Vec<&str> = rest.splitn(3, '/').collect();
    if segs.len() != 3 {
        return not_found(out);
    }
    let id = format!("{}/{}", segs[0], segs[1]);
    let bytes = {
        let repos = state.repos.lock().unwrap();
        match repos.get(&id).and_then(|r| r.files.get(segs[2])) {
            Some(b) => b.clone(),
            None => return not_found(out),
        }
    };
    respond(
        out,
        "200 OK",
        &[
            ("Content-Length", bytes.len().to_string()),
            ("ETag", etag_of(&bytes, 0)),
        ],
        &bytes,
    );
    Ok(())
}

/// `/{org}/{name}/resolve/{rev}/{file}`: a small file whole, a weight file redirected to
/// `/lfs/` on the second host name.
fn resolve(state: &State, path: &str, out: &mut TcpStream) -> std::io::Result<()> {
    let faults = state.faults.lock().unwrap().clone();
    let port = *state.port.lock().unwrap();
    let segs: Vec<&str> = path.trim_start_matches('/').splitn(5, '/').collect();
    if segs.len() != 5 || segs[2] != "resolve" {
        return not_found(out);
    }
    let id = format!("{}/{}", segs[0], segs[1]);
    let file = segs[4].to_string();
    let bytes = {
        let repos = state.repos.lock().unwrap();
        let Some(repo) = repos.get(&id) else {
            return not_found(out);
        };
        if segs[3] != "main" && segs[3] != repo.commit {
            return not_found(out);
        }
        match repo.files.get(&file) {
            Some(b) => b.clone(),
            None => return not_found(out),
        }
    };
    if file.ends_with(".safetensors") {
        let location = if faults.redirect_loop {
            path.to_string()
        } else if faults.redirect_to_https {
            format!("https://localhost:{port}/lfs/{id}/{file}")
        } else {
            format!("http://localhost:{port}/lfs/{id}/{file}")
        };
        respond(out, "302 Found", &[("Location", location)], b"");
        return Ok(());
    }
    if faults.endless_body {
        let _ = out.write_all(b"HTTP/1.1 200 OK\r\nConnection: close\r\n\r\n");
        let chunk = vec![b'{'; 64 << 10];
        while out.write_all(&chunk).is_ok() {}
        return Ok(());
    }
    respond(
        out,
        "200 OK",
        &[
            ("Content-Length", bytes.len().to_string()),
            ("ETag", etag_of(&bytes, 0)),
        ],
        &bytes,
    );
    Ok(())
}

/// `bytes=A-B` (B clamped to the file) or `bytes=A-`.
fn parse_range(v: &str, size: u64) -> Option<(u64, u64)> {
    let (a, b) = v.strip_prefix("bytes=")?.split_once('-')?;
    let a: u64 = a.parse().ok()?;
    let b: u64 = if b.is_empty() {
        size - 1
    } else {
        b.parse().ok()?
    };
    let b = b.min(size.checked_sub(1)?);
    (a <= b).then_some((a, b))
}
