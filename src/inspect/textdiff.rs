//! A unified line diff (`diff -u` style, three lines of context), for showing how a long
//! metadata string such as a chat template changed.
//!
//! ```
//! use ggufkit::inspect::textdiff::unified;
//!
//! let d = unified("a\nb\nc\n", "a\nB\nc\n", "old", "new");
//! assert_eq!(d, ["--- old", "+++ new", "@@ -1,3 +1,3 @@", " a", "-b", "+B", " c"]);
//! ```

/// Lines of context around a change.
const CONTEXT: usize = 3;

/// Largest product of line counts (after the common head and tail are set aside) diffed line
/// by line; larger texts are shown as one replaced block.
const MAX_CELLS: usize = 16 << 20;

/// One line of an edit script.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Op {
    Same,
    Del,
    Add,
}

/// The edit script from `a` to `b` (a longest common subsequence of lines).
fn script<'a>(a: &[&'a str], b: &[&'a str]) -> Vec<(Op, &'a str)> {
    let head = a.iter().zip(b).take_while(|(x, y)| x == y).count();
    let tail = a[head..]
        .iter()
        .rev()
        .zip(b[head..].iter().rev())
        .take_while(|(x, y)| x == y)
        .count();
    let (ma, mb) = (&a[head..a.len() - tail], &b[head..b.len() - tail]);
    let mut out: Vec<(Op, &str)> = a[..head].iter().map(|l| (Op::Same, *l)).collect();
    if ma.len().saturating_mul(mb.len()) > MAX_CELLS {
        out.extend(ma.iter().map(|l| (Op::Del, *l)));
        out.extend(mb.iter().map(|l| (Op::Add, *l)));
    } else {
        // lcs[i][j]: the LCS length of ma[i..] and mb[j..].
        let w = mb.len() + 1;
        let mut lcs = vec![0u32; (ma.len() + 1) * w];
        for i in (0..ma.len()).rev() {
            for j in (0..mb.len()).rev() {
                lcs[i * w + j] = if ma[i] == mb[j] {
                    lcs[(i + 1) * w + j + 1] + 1
                } else {
                    lcs[(i + 1) * w + j].max(lcs[i * w + j + 1])
                };
            }
        }
        let (mut i, mut j) = (0, 0);
        while i < ma.len() || j < mb.len() {
            if i < ma.len() && j < mb.len() && ma[i] == mb[j] {
                out.push((Op::Same, ma[i]));
                i += 1;
                j += 1;
            } else if i < ma.len() && (j == mb.len() || lcs[(i + 1) * w + j] >= lcs[i * w + j + 1])
            {
                // Deletions before additions, as diff -u shows them.
                out.push((Op::Del, ma[i]));
                i += 1;
            } else {
                out.push((Op::Add, mb[j]));
                j += 1;
            }
        }
    }
    out.extend(a[a.len() - tail..].iter().map(|l| (Op::Same, *l)));
    out
}

/// The lines of `s` (split at `\n`; a final newline does not make an empty line).
fn lines(s: &str) -> Vec<&str> {
    let s = s.strip_suffix('\n').unwrap_or(s);
    if s.is_empty() {
        Vec::new()
    } else {
        s.split('\n').collect()
    }
}

/// `a` and `b` as a unified diff with the file labels `label_a` / `label_b`; empty when the
/// texts are equal. Lines are split at `\n`; a final newline does not make an empty line.
pub fn unified(a: &str, b: &str, label_a: &str, label_b: &str) -> Vec<String> {
    if a == b {
        return Vec::new();
    }
    let (la, lb) = (lines(a), lines(b));
    let ops = script(&la, &lb);
    let mut out = vec![format!("--- {label_a}"), format!("+++ {label_b}")];
    // Hunks: runs of changes with CONTEXT lines around them, merged when close.
    let changed: Vec<usize> = (0..ops.len()).filter(|&k| ops[k].0 != Op::Same).collect();
    let mut k = 0;
    while k < changed.len() {
        let start = changed[k].saturating_sub(CONTEXT);
        let mut end = changed[k];
        while k < changed.len() && changed[k] <= end + 2 * CONTEXT + 1 {
            end = changed[k];
            k += 1;
        }
        let end = (end + CONTEXT + 1).min(ops.len());
        // Line numbers of the hunk's first line in a and in b.
        let before = &ops[..start];
        let a0 = before.iter().filter(|(o, _)| *o != Op::Add).count();
        let b0 = before.iter().filter(|(o, _)| *o != Op::Del).count();
        let hunk = &ops[start..end];
        let na = hunk.iter().filter(|(o, _)| *o != Op::Add).count();
        let nb = hunk.iter().filter(|(o, _)| *o != Op::Del).count();
        let range = |first: usize, n: usize| match n {
            0 => format!("{first},0"),
            1 => format!("{}", first + 1),
            n => format!("{},{n}", first + 1),
        };
        out.push(format!("@@ -{} +{} @@", range(a0, na), range(b0, nb)));
        for (op, line) in hunk {
            let mark = match op {
                Op::Same => ' ',
                Op::Del => '-',
                Op::Add => '+',
            };
            out.push(format!("{mark}{line}"));
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hunks_have_context_and_line_numbers() {
        let a: String = (1..=20).map(|i| format!("l{i}\n")).collect();
        let b = a
            .replace("l2\n", "l2\nnew\n")
            .replace("l15\n", "")
            .replace("l20\n", "L20\n");
        let d = unified(&a, &b, "a", "b");
        assert_eq!(
            d,
            [
                "--- a",
                "+++ b",
                "@@ -1,5 +1,6 @@",
                " l1",
                " l2",
                "+new",
                " l3",
                " l4",
                " l5",
                "@@ -12,9 +13,8 @@",
                " l12",
                " l13",
                " l14",
                "-l15",
                " l16",
                " l17",
                " l18",
                " l19",
                "-l20",
                "+L20",
            ]
        );
        assert!(unified(&a, &a, "a", "b").is_empty());
    }

    #[test]
    fn empty_sides() {
        assert_eq!(
            unified("", "x", "a", "b"),
            ["--- a", "+++ b", "@@ -0,0 +1 @@", "+x"]
        );
        assert_eq!(
            unified("x\ny", "", "a", "b"),
            ["--- a", "+++ b", "@@ -1,2 +0,0 @@", "-x", "-y"]
        );
    }
}
