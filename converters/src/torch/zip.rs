//! The ZIP container of a PyTorch checkpoint (`torch.save` since 1.6), read in place.
//!
//! Only what torch writes is accepted: one disk, no encryption, and members we read stored
//! uncompressed (method 0), so a tensor's bytes are a plain range of the mapped file. The
//! central directory is the table of contents (as in miniz, which torch reads with); each
//! member's local header only tells where its data starts (torch pads the local extra field
//! so that data is 64-byte aligned). ZIP64 records are read where the 32-bit fields overflow
//! (checkpoints over 4 GiB). Every offset and size is checked against the file through the
//! crate's checked cursor; member data ranges may not overlap one another or the central
//! directory.

use ggufkit::cursor::{Cursor, Short};

/// A ZIP structure that is malformed or not what torch writes.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("zip archive, at byte {offset}: {problem}")]
pub struct ZipError {
    /// Absolute byte offset in the file.
    pub offset: u64,
    /// What is wrong.
    pub problem: String,
}

fn zerr(offset: u64, problem: impl Into<String>) -> ZipError {
    ZipError {
        offset,
        problem: problem.into(),
    }
}

fn short(what: &str) -> impl Fn(Short) -> ZipError + '_ {
    move |s| {
        zerr(
            s.offset,
            format!(
                "truncated {what}: {} bytes needed, {} remain",
                s.needed, s.available
            ),
        )
    }
}

const EOCD_SIG: u32 = 0x0605_4b50;
const EOCD64_LOCATOR_SIG: u32 = 0x0706_4b50;
const EOCD64_SIG: u32 = 0x0606_4b50;
const CENTRAL_SIG: u32 = 0x0201_4b50;
const LOCAL_SIG: u32 = 0x0403_4b50;
const EOCD_LEN: usize = 22;
const LOCAL_HEADER_LEN: u64 = 30;
/// The longest archive comment a ZIP can carry (the EOCD is searched this far back).
const MAX_COMMENT: usize = 0xffff;

/// One member of the archive.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Member {
    /// Name in the archive (`archive/data/0`).
    pub name: String,
    /// Compression method (0 = stored).
    pub method: u16,
    /// CRC-32 of the uncompressed data.
    pub crc32: u32,
    /// Absolute offset of the member's local header.
    pub header_offset: u64,
    /// Absolute offset of the member's data.
    pub data_offset: u64,
    /// Bytes of data as stored.
    pub size: u64,
}

impl Member {
    /// The member's stored bytes (in range by construction of [`read_members`]).
    pub fn data<'a>(&self, file: &'a [u8]) -> &'a [u8] {
        // Checked in `read_members`: data_offset + size <= file.len().
        file.get(self.data_offset as usize..(self.data_offset + self.size) as usize)
            .unwrap_or_default()
    }
}

/// Whether `bytes` start like a ZIP archive (a local file header).
pub fn looks_like_zip(bytes: &[u8]) -> bool {
    bytes.starts_with(&LOCAL_SIG.to_le_bytes())
}

/// The end of central directory record: where the central directory is, and how many
/// entries it has.
struct Directory {
    entries: u64,
    offset: u64,
    size: u64,
}

fn find_eocd(file: &[u8]) -> Result<usize, ZipError> {
    if file.len() < EOCD_LEN {
        return Err(zerr(
            0,
            format!(
                "the file is {} bytes, too short for a zip archive",
                file.len()
            ),
        ));
    }
    let last = file.len() - EOCD_LEN;
    let first = last.saturating_sub(MAX_COMMENT);
    let sig = EOCD_SIG.to_le_bytes();
    (first..=last)
        .rev()
        .find(|&i| file.get(i..i + 4) == Some(&sig[..]))
        .ok_or_else(|| {
            zerr(
                file.len() as u64,
                "no end of central directory record (the archive is truncated or not a zip)",
            )
        })
}

fn read_directory(file: &[u8]) -> Result<Directory, ZipError> {
    let at = find_eocd(file)?;
    let mut c = Cursor::at(file.get(at..).unwrap_or_default(), at as u64);
    let what = short("end of central directory record");
    c.skip(4).map_err(&what)?;
    let disk = u16le(&mut c).map_err(&what)?;
    let cd_disk = u16le(&mut c).map_err(&what)?;
    let entries_here = u16le(&mut c).map_err(&what)?;
    let entries = u16le(&mut c).map_err(&what)?;
    let size = c.u32().map_err(&what)?;
    let offset = c.u32().map_err(&what)?;
    if disk != 0 && disk != 0xffff || cd_disk != 0 && cd_disk != 0xffff || entries_here != entries {
        return Err(zerr(at as u64, "multi-disk zip archives are not supported"));
    }
    let zip64 = entries == 0xffff || size == 0xffff_ffff || offset == 0xffff_ffff;
    if !zip64 {
        return Ok(Directory {
            entries: entries.into(),
            offset: offset.into(),
            size: size.into(),
        });
    }
    // ZIP64: a 20-byte locator just before the EOCD points at the ZIP64 EOCD record.
    let loc_at = at.checked_sub(20).ok_or_else(|| {
        zerr(
            at as u64,
            "ZIP64 archive without its end of directory locator",
        )
    })?;
    let mut c = Cursor::at(file.get(loc_at..at).unwrap_or_default(), loc_at as u64);
    let what = short("ZIP64 end of central directory locator");
    if c.u32().map_err(&what)? != EOCD64_LOCATOR_SIG {
        return Err(zerr(
            loc_at as u64,
            "ZIP64 archive without its end of directory locator",
        ));
    }
    c.skip(4).map_err(&what)?;
    let rec_at = c.u64().map_err(&what)?;
    let rec = usize::try_from(rec_at)
        .ok()
        .and_then(|r| file.get(r..loc_at))
        .ok_or_else(|| {
            zerr(
                loc_at as u64,
                format!("ZIP64 end of directory record offset {rec_at} is outside the file"),
            )
        })?;
    let mut c = Cursor::at(rec, rec_at);
    let what = short("ZIP64 end of central directory record");
    if c.u32().map_err(&what)? != EOCD64_SIG {
        return Err(zerr(rec_at, "bad ZIP64 end of central directory signature"));
    }
    // record size, made by, needed, this disk, cd disk
    c.skip(8 + 2 + 2 + 4 + 4).map_err(&what)?;
    let entries_here = c.u64().map_err(&what)?;
    let entries = c.u64().map_err(&what)?;
    let size = c.u64().map_err(&what)?;
    let offset = c.u64().map_err(&what)?;
    if entries_here != entries {
        return Err(zerr(rec_at, "multi-disk zip archives are not supported"));
    }
    Ok(Directory {
        entries,
        offset,
        size,
    })
}

fn u16le(c: &mut Cursor<'_>) -> Result<u16, Short> {
    c.le_array().map(u16::from_le_bytes)
}

/// Reads the ZIP64 extended information extra field: the 64-bit values of the fields whose
/// 32-bit value is all ones, in the order uncompressed size, compressed size, header offset.
fn zip64_extra(extra: &[u8], base: u64, fields: [&mut u64; 3]) -> Result<(), ZipError> {
    let mut c = Cursor::at(extra, base);
    let what = short("extra field");
    while !c.at_end() {
        let id = u16le(&mut c).map_err(&what)?;
        let len = u16le(&mut c).map_err(&what)?;
        let body = c.take(len.into()).map_err(&what)?;
        if id != 0x0001 {
            continue;
        }
        let mut b = Cursor::at(body, c.offset() - u64::from(len));
        for f in fields {
            if *f == 0xffff_ffff {
                *f = b.u64().map_err(short("ZIP64 extra field"))?;
            }
        }
        return Ok(());
    }
    if fields.iter().any(|f| **f == 0xffff_ffff) {
        return Err(zerr(base, "ZIP64 sizes announced but no ZIP64 extra field"));
    }
    Ok(())
}

/// Every member of the archive in central directory order, each with its data range
/// checked: inside the file, before the central directory, overlapping no other member.
/// Names must be unique UTF-8; encrypted members and split archives are refused.
pub fn read_members(file: &[u8]) -> Result<Vec<Member>, ZipError> {
    let dir = read_directory(file)?;
    let total = file.len() as u64;
    let cd_end = dir
        .offset
        .checked_add(dir.size)
        .filter(|&e| e <= total)
        .ok_or_else(|| {
            zerr(
                dir.offset,
                format!(
                    "central directory [{}, +{}) runs past the end of the file ({total} bytes)",
                    dir.offset, dir.size
                ),
            )
        })?;
    let cd = file
        .get(dir.offset as usize..cd_end as usize)
        .unwrap_or_default();
    // Each entry takes at least 46 bytes: a count the directory cannot hold is a lie.
    if dir.entries > dir.size / 46 {
        return Err(zerr(
            dir.offset,
            format!(
                "central directory of {} bytes cannot hold the {} entries it announces",
                dir.size, dir.entries
            ),
        ));
    }
    let mut c = Cursor::at(cd, dir.offset);
    let mut members: Vec<Member> = Vec::with_capacity(dir.entries as usize);
    let mut names = std::collections::HashSet::new();
    for _ in 0..dir.entries {
        let at = c.offset();
        let what = short("central directory entry");
        if c.u32().map_err(&what)? != CENTRAL_SIG {
            return Err(zerr(at, "bad central directory entry signature"));
        }
        c.skip(4).map_err(&what)?; // made by, needed
        let flags = u16le(&mut c).map_err(&what)?;
        let method = u16le(&mut c).map_err(&what)?;
        c.skip(4).map_err(&what)?; // time, date
        let crc32 = c.u32().map_err(&what)?;
        let mut csize = u64::from(c.u32().map_err(&what)?);
        let mut usize_ = u64::from(c.u32().map_err(&what)?);
        let name_len = u16le(&mut c).map_err(&what)?;
        let extra_len = u16le(&mut c).map_err(&what)?;
        let comment_len = u16le(&mut c).map_err(&what)?;
        c.skip(8).map_err(&what)?; // disk start, internal and external attributes
        let mut header_offset = u64::from(c.u32().map_err(&what)?);
        let name_at = c.offset();
        let name = c.take(name_len.into()).map_err(&what)?;
        let extra_at = c.offset();
        let extra = c.take(extra_len.into()).map_err(&what)?;
        c.skip(comment_len.into()).map_err(&what)?;
        let name = std::str::from_utf8(name)
            .map_err(|_| zerr(name_at, "member name is not UTF-8"))?
            .to_string();
        if flags & 1 != 0 {
            return Err(zerr(at, format!("member '{name}' is encrypted")));
        }
        zip64_extra(
            extra,
            extra_at,
            [&mut usize_, &mut csize, &mut header_offset],
        )?;
        if method == 0 && csize != usize_ {
            return Err(zerr(
                at,
                format!(
                    "stored member '{name}' has compressed size {csize} but uncompressed \
                     size {usize_}"
                ),
            ));
        }
        if !names.insert(name.clone()) {
            return Err(zerr(at, format!("member '{name}' appears twice")));
        }
        let data_offset = local_data_offset(file, &name, header_offset)?;
        let end = data_offset.checked_add(csize).filter(|&e| e <= dir.offset);
        if end.is_none() {
            return Err(zerr(
                header_offset,
                format!(
                    "member '{name}': its {csize} bytes of data at {data_offset} run past the \
                     central directory (at {}): the archive is truncated or corrupt",
                    dir.offset
                ),
            ));
        }
        members.push(Member {
            name,
            method,
            crc32,
            header_offset,
            data_offset,
            size: csize,
        });
    }
    check_overlap(&members)?;
    Ok(members)
}

/// Where the data of the member whose local header is at `at` starts; the local header
/// must name the same member.
fn local_data_offset(file: &[u8], name: &str, at: u64) -> Result<u64, ZipError> {
    let bytes = usize::try_from(at)
        .ok()
        .and_then(|a| file.get(a..))
        .ok_or_else(|| {
            zerr(
                at,
                format!("member '{name}': local header offset {at} is past the end of the file"),
            )
        })?;
    let mut c = Cursor::at(bytes, at);
    let what = short("local file header");
    if c.u32().map_err(&what)? != LOCAL_SIG {
        return Err(zerr(
            at,
            format!("member '{name}': bad local file header signature"),
        ));
    }
    c.skip(22).map_err(&what)?;
    let name_len = u16le(&mut c).map_err(&what)?;
    let extra_len = u16le(&mut c).map_err(&what)?;
    let local_name = c.take(name_len.into()).map_err(&what)?;
    if local_name != name.as_bytes() {
        return Err(zerr(
            at,
            format!(
                "member '{name}': its local header names '{}'",
                String::from_utf8_lossy(local_name)
            ),
        ));
    }
    c.skip(extra_len.into()).map_err(&what)?;
    debug_assert_eq!(
        c.offset(),
        at + LOCAL_HEADER_LEN + u64::from(name_len) + u64::from(extra_len)
    );
    Ok(c.offset())
}

/// Members (local header to end of data) may not share bytes: a tensor's data aliasing
/// another member's header or data is a crafted file.
fn check_overlap(members: &[Member]) -> Result<(), ZipError> {
    let mut spans: Vec<(u64, u64, &str)> = members
        .iter()
        .map(|m| (m.header_offset, m.data_offset + m.size, m.name.as_str()))
        .collect();
    spans.sort_unstable();
    for w in spans.windows(2) {
        if let [(_, end, a), (start, _, b)] = w {
            if start < end {
                return Err(zerr(*start, format!("members '{a}' and '{b}' overlap")));
            }
        }
    }
    Ok(())
}

/// CRC-32 (IEEE, reflected), as ZIP stores it.
pub fn crc32(bytes: &[u8]) -> u32 {
    const fn table() -> [u32; 256] {
        let mut t = [0u32; 256];
        let mut i = 0;
        while i < 256 {
            let mut c = i as u32;
            let mut k = 0;
            while k < 8 {
                c = if c & 1 != 0 {
                    0xedb8_8320 ^ (c >> 1)
                } else {
                    c >> 1
                };
                k += 1;
            }
            t[i] = c;
            i += 1;
        }
        t
    }
    static TABLE: [u32; 256] = table();
    let mut c = !0u32;
    for &b in bytes {
        c = TABLE[((c ^ u32::from(b)) & 0xff) as usize] ^ (c >> 8);
    }
    !c
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn crc32_of_known_strings() {
        assert_eq!(crc32(b""), 0);
        assert_eq!(crc32(b"123456789"), 0xcbf4_3926);
    }

    /// A one-member archive whose central directory uses ZIP64 for the sizes and the
    /// header offset, with a ZIP64 end of directory record and locator.
    fn zip64_archive(data: &[u8]) -> Vec<u8> {
        let name = b"archive/data/0";
        let mut out = Vec::new();
        // Local header (its own sizes are not read) + name + data.
        out.extend_from_slice(&LOCAL_SIG.to_le_bytes());
        out.extend_from_slice(&[0u8; 22]);
        out.extend_from_slice(&(name.len() as u16).to_le_bytes());
        out.extend_from_slice(&0u16.to_le_bytes());
        out.extend_from_slice(name);
        out.extend_from_slice(data);
        let cd_at = out.len() as u64;
        let mut cd = Vec::new();
        cd.extend_from_slice(&CENTRAL_SIG.to_le_bytes());
        cd.extend_from_slice(&[45, 0, 45, 0, 0, 0, 0, 0, 0, 0, 0, 0]); // versions .. date
        cd.extend_from_slice(&crc32(data).to_le_bytes());
        cd.extend_from_slice(&[0xff; 8]); // sizes: in the ZIP64 field
        cd.extend_from_slice(&(name.len() as u16).to_le_bytes());
        cd.extend_from_slice(&28u16.to_le_bytes()); // extra length
        cd.extend_from_slice(&[0u8; 2 + 2 + 2 + 4]); // comment, disk, attributes
        cd.extend_from_slice(&[0xff; 4]); // header offset: in the ZIP64 field
        cd.extend_from_slice(name);
        cd.extend_from_slice(&1u16.to_le_bytes());
        cd.extend_from_slice(&24u16.to_le_bytes());
        cd.extend_from_slice(&(data.len() as u64).to_le_bytes());
        cd.extend_from_slice(&(data.len() as u64).to_le_bytes());
        cd.extend_from_slice(&0u64.to_le_bytes());
        out.extend_from_slice(&cd);
        let rec_at = out.len() as u64;
        out.extend_from_slice(&EOCD64_SIG.to_le_bytes());
        out.extend_from_slice(&44u64.to_le_bytes());
        out.extend_from_slice(&[45, 0, 45, 0, 0, 0, 0, 0, 0, 0, 0, 0]);
        out.extend_from_slice(&1u64.to_le_bytes());
        out.extend_from_slice(&1u64.to_le_bytes());
        out.extend_from_slice(&(cd.len() as u64).to_le_bytes());
        out.extend_from_slice(&cd_at.to_le_bytes());
        out.extend_from_slice(&EOCD64_LOCATOR_SIG.to_le_bytes());
        out.extend_from_slice(&0u32.to_le_bytes());
        out.extend_from_slice(&rec_at.to_le_bytes());
        out.extend_from_slice(&1u32.to_le_bytes());
        out.extend_from_slice(&EOCD_SIG.to_le_bytes());
        out.extend_from_slice(&[0, 0, 0, 0, 0xff, 0xff, 0xff, 0xff]);
        out.extend_from_slice(&[0xff; 8]);
        out.extend_from_slice(&0u16.to_le_bytes());
        out
    }

    #[test]
    fn zip64_records_are_read() {
        let data = b"0123456789abcdef";
        let zip = zip64_archive(data);
        let members = read_members(&zip).unwrap();
        assert_eq!(members.len(), 1);
        let m = &members[0];
        assert_eq!(
            (m.name.as_str(), m.method, m.size),
            ("archive/data/0", 0, 16)
        );
        assert_eq!(m.data(&zip), data);
        assert_eq!(m.crc32, crc32(data));
        // Every truncation is an error, never a panic.
        for cut in 0..zip.len() {
            assert!(read_members(&zip[..cut]).is_err(), "cut at {cut}");
        }
    }

    #[test]
    fn short_and_garbage_inputs_are_errors() {
        assert!(read_members(b"").is_err());
        assert!(read_members(&[0u8; 100]).is_err());
        let mut eocd = EOCD_SIG.to_le_bytes().to_vec();
        eocd.extend_from_slice(&[0, 0, 0, 0, 1, 0, 1, 0, 46, 0, 0, 0, 0, 0, 0, 0, 0, 0]);
        // One entry announced at offset 0, which is the EOCD itself.
        assert!(read_members(&eocd).is_err());
    }
}
