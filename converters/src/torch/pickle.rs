//! A restricted unpickler: exactly what a PyTorch state dict needs, nothing that runs code.
//!
//! Python's pickle format is a small stack machine whose `GLOBAL` opcode names any importable
//! object and whose `REDUCE` calls it: a checkpoint can run `os.system` on load. This machine
//! never imports or calls anything. A `GLOBAL` is resolved against a fixed allow-list (the
//! tensor rebuild functions, the storage classes and dtypes, `collections.OrderedDict`) and
//! every other name is refused on the spot with [`PickleError::ForbiddenGlobal`]; `REDUCE`
//! accepts only those callables with the arguments `torch.save` gives them, and builds plain
//! records (a storage reference, a tensor view), never objects with behaviour. Opcodes a state
//! dict does not use (object construction, lists, extension codes, ...) are refused.
//!
//! Memory is bounded by the input, then capped: objects live in one flat arena (no recursive
//! structure to overflow the stack when dropped, cycles are harmless), the memo is a vector
//! grown one entry at a time for the dense indices pickle writes (0, 1, 2, ...) and a map for
//! any other index (never a vector sized by an index from the file), and the stack, the
//! marks, the memo and the arena each have a fixed limit.
//!
//! Counts alone do not bound memory: a few bytes of pickle (a memo `GET` and a `SETITEM`)
//! can name a large object again, and a copy per name would grow with the names, not the
//! file. So nothing is copied per reference (a storage key is shared by every tensor that
//! names it, in the state dict returned too), and everything the machine builds — strings,
//! objects, dict entries, memo entries, the returned records — is charged to one memory
//! budget proportional to the pickle's size ([`BUDGET_PER_BYTE`] bytes per pickle byte,
//! plus [`BUDGET_FLOOR`]); a pickle that needs more is refused with [`PickleError::Limit`].

use std::collections::HashMap;
use std::rc::Rc;
use std::sync::Arc;

use ggufkit::cursor::{Cursor, Short};

use crate::hf::safetensors::StDtype;

/// Most values on the stack at once (torch batches `SETITEMS` by 1000 pairs).
pub const MAX_STACK: usize = 1 << 20;
/// Most open marks at once (a state dict nests three).
pub const MAX_MARKS: usize = 256;
/// Most memo entries (torch memoizes about 12 values per tensor).
pub const MAX_MEMO: usize = 1 << 21;
/// Most objects (tuples, dicts, storages, tensors) built: about 8 per tensor, so a file of
/// up to ~130,000 tensors; a pickle that builds more (1 byte each) is refused at ~100 MB.
pub const MAX_OBJECTS: usize = 1 << 20;
/// Longest `GLOBAL` module or name line.
const MAX_GLOBAL_LINE: usize = 1024;
/// Most dimensions of a tensor.
pub const MAX_DIMS: usize = 64;
/// Memory the unpickler may use per byte of pickle, counting the records it returns and the
/// tensor table made of them. `torch.save`'s pickles need about 17 (the test
/// `the_fixtures_need_at_most_two_thirds_of_the_budget` measures them); a state dict whose
/// entries name one tensor again and again needs 50 or more.
pub const BUDGET_PER_BYTE: usize = 32;
/// Memory the unpickler may use whatever the pickle's size.
pub const BUDGET_FLOOR: usize = 64 << 20;

/// Why a pickle was refused.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum PickleError {
    /// A global outside the allow-list (`os.system`, `builtins.eval`, any class).
    #[error(
        "data.pkl byte {offset}: global '{module}.{name}' is not allowed (a state dict needs \
         only tensors, storages and OrderedDict); refusing the file without running anything"
    )]
    ForbiddenGlobal {
        /// Offset of the opcode in the pickle.
        offset: u64,
        /// The module named.
        module: String,
        /// The attribute named.
        name: String,
    },
    /// An opcode a state dict does not use.
    #[error("data.pkl byte {offset}: pickle opcode {name} ({opcode:#04x}) is not allowed in a state dict")]
    UnsupportedOpcode {
        /// Offset of the opcode.
        offset: u64,
        /// The opcode byte.
        opcode: u8,
        /// Its pickletools name, or "unknown".
        name: &'static str,
    },
    /// A fixed limit of the machine was reached.
    #[error("data.pkl byte {offset}: more than {limit} {what}: refusing an unbounded pickle")]
    Limit {
        /// Offset of the opcode.
        offset: u64,
        /// What overflowed.
        what: &'static str,
        /// The limit.
        limit: usize,
    },
    /// Anything else: truncation, a malformed value, a call with unexpected arguments.
    #[error("data.pkl byte {offset}: {problem}")]
    Malformed {
        /// Offset of the opcode.
        offset: u64,
        /// What is wrong.
        problem: String,
    },
}

fn bad(offset: u64, problem: impl Into<String>) -> PickleError {
    PickleError::Malformed {
        offset,
        problem: problem.into(),
    }
}

fn truncated(s: Short) -> PickleError {
    bad(
        s.offset,
        format!(
            "truncated pickle: {} bytes needed, {} remain",
            s.needed, s.available
        ),
    )
}

/// One tensor of the state dict, as the pickle describes it (not yet checked against the
/// archive).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TensorSpec {
    /// Key in the state dict.
    pub name: String,
    /// Storage key (the member `<archive>/data/<key>`), shared by the tensors of a storage.
    pub storage: Arc<str>,
    /// Bytes the storage reference declares.
    pub storage_bytes: u64,
    /// Element type.
    pub dtype: StDtype,
    /// Offset into the storage, in elements.
    pub offset: u64,
    /// Shape, outermost first.
    pub shape: Vec<u64>,
    /// Strides, in elements.
    pub stride: Vec<u64>,
}

/// The callables and classes a state dict may name.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Global {
    OrderedDict,
    RebuildTensorV2,
    RebuildTensorV3,
    RebuildParameter,
    /// A storage class: typed (`torch.FloatStorage`) or `torch.storage.UntypedStorage`.
    Storage(Option<StDtype>),
    /// A dtype object (`torch.float8_e4m3fn`), as `_rebuild_tensor_v3` takes it.
    Dtype(StDtype),
}

/// torch's dtype names → element type; `None`: a dtype we know but cannot convert.
const DTYPES: &[(&str, &str, Option<StDtype>)] = &[
    // (storage class, dtype name, element type)
    ("DoubleStorage", "float64", Some(StDtype::F64)),
    ("FloatStorage", "float32", Some(StDtype::F32)),
    ("HalfStorage", "float16", Some(StDtype::F16)),
    ("BFloat16Storage", "bfloat16", Some(StDtype::Bf16)),
    ("LongStorage", "int64", Some(StDtype::I64)),
    ("IntStorage", "int32", Some(StDtype::I32)),
    ("ShortStorage", "int16", Some(StDtype::I16)),
    ("CharStorage", "int8", Some(StDtype::I8)),
    ("ByteStorage", "uint8", Some(StDtype::U8)),
    ("BoolStorage", "bool", Some(StDtype::Bool)),
    ("", "float8_e4m3fn", Some(StDtype::F8E4M3)),
    ("", "float8_e5m2", Some(StDtype::F8E5M2)),
    ("", "float8_e8m0fnu", Some(StDtype::F8E8M0)),
    ("ComplexFloatStorage", "complex64", None),
    ("ComplexDoubleStorage", "complex128", None),
    ("QInt8Storage", "qint8", None),
    ("QUInt8Storage", "quint8", None),
    ("QInt32Storage", "qint32", None),
    ("", "uint16", None),
    ("", "uint32", None),
    ("", "uint64", None),
    ("", "float8_e4m3fnuz", None),
    ("", "float8_e5m2fnuz", None),
];

/// Resolves a global against the allow-list.
fn resolve(offset: u64, module: &str, name: &str) -> Result<Global, PickleError> {
    let g = match (module, name) {
        ("collections", "OrderedDict") => Some(Global::OrderedDict),
        ("torch._utils", "_rebuild_tensor_v2") => Some(Global::RebuildTensorV2),
        ("torch._utils", "_rebuild_tensor_v3") => Some(Global::RebuildTensorV3),
        ("torch._utils", "_rebuild_parameter") => Some(Global::RebuildParameter),
        ("torch.storage" | "torch", "UntypedStorage") => Some(Global::Storage(None)),
        ("torch", n) => {
            let known = DTYPES
                .iter()
                .find(|(storage, dtype, _)| (!storage.is_empty() && *storage == n) || *dtype == n);
            match known {
                Some((storage, _, Some(t))) if *storage == n => Some(Global::Storage(Some(*t))),
                Some((_, _, Some(t))) => Some(Global::Dtype(*t)),
                Some((_, dtype, None)) => {
                    return Err(bad(
                        offset,
                        format!("tensors of dtype torch.{dtype} are not supported"),
                    ))
                }
                None => None,
            }
        }
        _ => None,
    };
    g.ok_or_else(|| PickleError::ForbiddenGlobal {
        offset,
        module: module.to_string(),
        name: name.to_string(),
    })
}

#[derive(Debug, Clone)]
enum Value {
    None,
    Bool,
    Int(i64),
    Float,
    Str(Rc<str>),
    Global(Global),
    /// An object of the arena.
    Obj(u32),
}

#[derive(Debug)]
enum Obj {
    Tuple(Vec<Value>),
    Dict(Box<Dict>),
    Storage(Storage),
    Tensor(Box<Tensor>),
}

// An arena slot stays small: the big variants are boxed.
const _: () = assert!(std::mem::size_of::<Obj>() <= 40);

#[derive(Debug, Default)]
struct Dict {
    ordered: bool,
    entries: Vec<(Rc<str>, Value)>,
    /// Key → position (an empty map allocates nothing).
    index: HashMap<Rc<str>, usize>,
}

impl Dict {
    /// A Python dict's assignment: a new key goes last, an old one keeps its place.
    fn set(&mut self, key: Rc<str>, value: Value) {
        match self.index.get(&key) {
            Some(&i) => {
                if let Some(e) = self.entries.get_mut(i) {
                    e.1 = value;
                }
            }
            None => {
                self.index.insert(key.clone(), self.entries.len());
                self.entries.push((key, value));
            }
        }
    }
}

#[derive(Debug, Clone)]
struct Storage {
    key: Rc<str>,
    /// `None`: untyped (`numel` counts bytes).
    dtype: Option<StDtype>,
    numel: u64,
}

#[derive(Debug, Clone)]
struct Tensor {
    storage: Storage,
    dtype: StDtype,
    offset: u64,
    shape: Vec<u64>,
    stride: Vec<u64>,
}

fn kind(v: &Value, arena: &[Obj]) -> &'static str {
    match v {
        Value::None => "None",
        Value::Bool => "a bool",
        Value::Int(_) => "an int",
        Value::Float => "a float",
        Value::Str(_) => "a string",
        Value::Global(_) => "a global",
        Value::Obj(i) => match arena.get(*i as usize) {
            Some(Obj::Tuple(_)) => "a tuple",
            Some(Obj::Dict(_)) => "a dict",
            Some(Obj::Storage(_)) => "a storage",
            Some(Obj::Tensor(_)) => "a tensor",
            None => "an object",
        },
    }
}

struct Machine<'a> {
    c: Cursor<'a>,
    stack: Vec<Value>,
    marks: Vec<usize>,
    /// Memo entries 0, 1, 2, ... as pickle writes them.
    memo: Vec<Value>,
    /// Memo entries at any other index.
    sparse_memo: HashMap<u32, Value>,
    arena: Vec<Obj>,
    /// Offset of the opcode being run (for errors).
    at: u64,
    /// Bytes of the memory budget left.
    budget: usize,
    /// The whole budget (for errors).
    budget_total: usize,
}

/// Bytes an object holds, as charged to the budget.
fn obj_bytes(o: &Obj) -> usize {
    let payload = match o {
        Obj::Tuple(items) => items.len() * std::mem::size_of::<Value>(),
        Obj::Dict(_) => std::mem::size_of::<Dict>(),
        Obj::Storage(_) => 0,
        Obj::Tensor(t) => std::mem::size_of::<Tensor>() + (t.shape.len() + t.stride.len()) * 8,
    };
    std::mem::size_of::<Obj>() + payload
}

impl Machine<'_> {
    /// Takes `bytes` from the memory budget, or refuses the pickle.
    fn charge(&mut self, bytes: usize) -> Result<(), PickleError> {
        self.budget = self.budget.checked_sub(bytes).ok_or(PickleError::Limit {
            offset: self.at,
            what: "bytes of memory for the objects and records of a pickle this size",
            limit: self.budget_total,
        })?;
        Ok(())
    }

    fn push(&mut self, v: Value) -> Result<(), PickleError> {
        if self.stack.len() >= MAX_STACK {
            return Err(PickleError::Limit {
                offset: self.at,
                what: "values on the stack",
                limit: MAX_STACK,
            });
        }
        self.stack.push(v);
        Ok(())
    }

    fn pop(&mut self) -> Result<Value, PickleError> {
        let floor = self.marks.last().copied().unwrap_or(0);
        if self.stack.len() <= floor {
            return Err(bad(self.at, "stack underflow"));
        }
        self.stack
            .pop()
            .ok_or_else(|| bad(self.at, "stack underflow"))
    }

    fn top(&self) -> Result<&Value, PickleError> {
        let floor = self.marks.last().copied().unwrap_or(0);
        if self.stack.len() <= floor {
            return Err(bad(self.at, "stack underflow"));
        }
        self.stack
            .last()
            .ok_or_else(|| bad(self.at, "stack underflow"))
    }

    /// The values above the innermost mark, which is removed.
    fn pop_mark(&mut self) -> Result<Vec<Value>, PickleError> {
        let m = self
            .marks
            .pop()
            .ok_or_else(|| bad(self.at, "no MARK to pop to"))?;
        Ok(self.stack.split_off(m.min(self.stack.len())))
    }

    fn alloc(&mut self, o: Obj) -> Result<Value, PickleError> {
        self.charge(obj_bytes(&o))?;
        if self.arena.len() >= MAX_OBJECTS {
            return Err(PickleError::Limit {
                offset: self.at,
                what: "objects",
                limit: MAX_OBJECTS,
            });
        }
        let i = self.arena.len() as u32;
        self.arena.push(o);
        Ok(Value::Obj(i))
    }

    fn obj(&self, v: &Value) -> Option<&Obj> {
        match v {
            Value::Obj(i) => self.arena.get(*i as usize),
            _ => None,
        }
    }

    fn put(&mut self, index: u32) -> Result<(), PickleError> {
        let v = self.top()?.clone();
        let i = index as usize;
        if let Some(slot) = self.memo.get_mut(i) {
            *slot = v;
            return Ok(());
        }
        if let Some(slot) = self.sparse_memo.get_mut(&index) {
            *slot = v;
            return Ok(());
        }
        if self.memo.len() + self.sparse_memo.len() >= MAX_MEMO {
            return Err(PickleError::Limit {
                offset: self.at,
                what: "memo entries",
                limit: MAX_MEMO,
            });
        }
        self.charge(2 * std::mem::size_of::<Value>())?;
        if i == self.memo.len() {
            self.memo.push(v);
        } else {
            self.sparse_memo.insert(index, v);
        }
        Ok(())
    }

    fn get(&mut self, index: u32) -> Result<(), PickleError> {
        let v = self
            .memo
            .get(index as usize)
            .or_else(|| self.sparse_memo.get(&index))
            .cloned()
            .ok_or_else(|| bad(self.at, format!("memo index {index} was never stored")))?;
        self.push(v)
    }

    fn string(&mut self, len: u64) -> Result<(), PickleError> {
        let at = self.at;
        let bytes = self.c.take(len).map_err(truncated)?;
        let s = std::str::from_utf8(bytes).map_err(|_| bad(at, "string is not UTF-8"))?;
        self.charge(s.len() + 16)?;
        self.push(Value::Str(s.into()))
    }

    fn line(&mut self) -> Result<&str, PickleError> {
        let rest = self.c.rest();
        let n = rest
            .iter()
            .take(MAX_GLOBAL_LINE + 1)
            .position(|&b| b == b'\n')
            .ok_or_else(|| bad(self.at, "GLOBAL name is unterminated or too long"))?;
        let at = self.at;
        let bytes = self.c.take(n as u64 + 1).map_err(truncated)?;
        std::str::from_utf8(bytes.get(..n).unwrap_or_default())
            .map_err(|_| bad(at, "GLOBAL name is not UTF-8"))
    }

    fn int(&mut self, n: u64) -> Result<(), PickleError> {
        let at = self.at;
        let bytes = self.c.take(n).map_err(truncated)?;
        if bytes.len() > 8 {
            return Err(bad(at, format!("a {n}-byte integer is too large")));
        }
        let mut buf = [0u8; 8];
        if bytes.last().is_some_and(|b| b & 0x80 != 0) {
            buf = [0xff; 8];
        }
        buf.get_mut(..bytes.len())
            .unwrap_or_default()
            .copy_from_slice(bytes);
        self.push(Value::Int(i64::from_le_bytes(buf)))
    }

    fn tuple(&mut self, items: Vec<Value>) -> Result<(), PickleError> {
        let v = self.alloc(Obj::Tuple(items))?;
        self.push(v)
    }

    fn set_items(&mut self, items: Vec<Value>) -> Result<(), PickleError> {
        let at = self.at;
        let target = match self.top()? {
            Value::Obj(i) => *i as usize,
            other => {
                return Err(bad(
                    at,
                    format!("SETITEM on {}, not a dict", kind(other, &self.arena)),
                ))
            }
        };
        if !items.len().is_multiple_of(2) {
            return Err(bad(at, "SETITEMS with an odd number of values"));
        }
        let mut pairs = Vec::with_capacity(items.len() / 2);
        let mut it = items.into_iter();
        while let (Some(k), Some(v)) = (it.next(), it.next()) {
            let Value::Str(k) = k else {
                return Err(bad(
                    at,
                    format!("dict key is {}, not a string", kind(&k, &self.arena)),
                ));
            };
            pairs.push((k, v));
        }
        // A new entry: the pair, its index slot, and room for the vectors to double.
        let entry = 2 * (std::mem::size_of::<(Rc<str>, Value)>() + 32);
        self.charge(pairs.len() * entry)?;
        match self.arena.get_mut(target) {
            Some(Obj::Dict(d)) => {
                for (k, v) in pairs {
                    d.set(k, v);
                }
                Ok(())
            }
            _ => Err(bad(at, "SETITEM on something that is not a dict")),
        }
    }

    fn int_arg(&self, v: &Value, what: &str) -> Result<u64, PickleError> {
        match v {
            Value::Int(n) if *n >= 0 => Ok(*n as u64),
            other => Err(bad(
                self.at,
                format!(
                    "{what} is {}, not a non-negative int",
                    kind(other, &self.arena)
                ),
            )),
        }
    }

    fn ints(&self, v: &Value, what: &str) -> Result<Vec<u64>, PickleError> {
        let Some(Obj::Tuple(items)) = self.obj(v) else {
            return Err(bad(
                self.at,
                format!("{what} is {}, not a tuple", kind(v, &self.arena)),
            ));
        };
        if items.len() > MAX_DIMS {
            return Err(bad(
                self.at,
                format!("{what} has {} dimensions (at most {MAX_DIMS})", items.len()),
            ));
        }
        items.iter().map(|x| self.int_arg(x, what)).collect()
    }

    fn empty_hooks(&self, v: &Value) -> Result<(), PickleError> {
        match self.obj(v) {
            Some(Obj::Dict(d)) if d.entries.is_empty() => Ok(()),
            _ => Err(bad(
                self.at,
                format!(
                    "tensor backward hooks are {}, not an empty OrderedDict",
                    kind(v, &self.arena)
                ),
            )),
        }
    }

    /// `_rebuild_tensor_v2(storage, offset, size, stride, requires_grad, hooks[, metadata])`
    /// and `_rebuild_tensor_v3(..., hooks, dtype[, metadata])`.
    fn rebuild_tensor(&self, args: &[Value], v3: bool) -> Result<Tensor, PickleError> {
        let name = if v3 {
            "_rebuild_tensor_v3"
        } else {
            "_rebuild_tensor_v2"
        };
        let n = args.len();
        let (lo, hi) = if v3 { (7, 8) } else { (6, 7) };
        if n < lo || n > hi {
            return Err(bad(self.at, format!("{name} called with {n} arguments")));
        }
        let [storage, offset, size, stride, requires_grad, hooks, rest @ ..] = args else {
            return Err(bad(self.at, format!("{name} called with {n} arguments")));
        };
        let Some(Obj::Storage(storage)) = self.obj(storage) else {
            return Err(bad(
                self.at,
                format!(
                    "{name}: the storage is {}, not a storage reference",
                    kind(storage, &self.arena)
                ),
            ));
        };
        if !matches!(requires_grad, Value::Bool) {
            return Err(bad(self.at, format!("{name}: requires_grad is not a bool")));
        }
        self.empty_hooks(hooks)?;
        let (dtype, metadata) = if v3 {
            match rest {
                [Value::Global(Global::Dtype(t)), meta @ ..] => (*t, meta.first()),
                [Value::Global(Global::Storage(Some(t))), meta @ ..] => (*t, meta.first()),
                _ => {
                    return Err(bad(
                        self.at,
                        format!("{name}: the dtype is not a torch dtype"),
                    ))
                }
            }
        } else {
            let t = storage
                .dtype
                .ok_or_else(|| bad(self.at, format!("{name} of an untyped storage (no dtype)")))?;
            (t, rest.first())
        };
        if let Some(m) = metadata {
            let ok = matches!(m, Value::None) || matches!(self.obj(m), Some(Obj::Dict(_)));
            if !ok {
                return Err(bad(self.at, format!("{name}: unexpected tensor metadata")));
            }
        }
        if let Some(t) = storage.dtype {
            if t != dtype {
                return Err(bad(
                    self.at,
                    format!(
                        "{name}: a {} tensor on a {} storage",
                        dtype.name(),
                        t.name()
                    ),
                ));
            }
        }
        let shape = self.ints(size, "the size")?;
        let stride = self.ints(stride, "the stride")?;
        if shape.len() != stride.len() {
            return Err(bad(
                self.at,
                format!(
                    "{name}: size has {} dimensions but stride {}",
                    shape.len(),
                    stride.len()
                ),
            ));
        }
        Ok(Tensor {
            storage: storage.clone(),
            dtype,
            offset: self.int_arg(offset, "the storage offset")?,
            shape,
            stride,
        })
    }

    fn reduce(&mut self) -> Result<(), PickleError> {
        let args = self.pop()?;
        let callable = self.pop()?;
        let Value::Global(g) = callable else {
            return Err(bad(
                self.at,
                format!(
                    "REDUCE calls {}, not an allowed function",
                    kind(&callable, &self.arena)
                ),
            ));
        };
        // No call takes more than 8 arguments: a longer tuple is refused before it is copied.
        let args: Vec<Value> = match self.obj(&args) {
            Some(Obj::Tuple(t)) if t.len() <= 8 => t.clone(),
            Some(Obj::Tuple(t)) => {
                return Err(bad(self.at, format!("REDUCE with {} arguments", t.len())))
            }
            _ => {
                return Err(bad(
                    self.at,
                    format!(
                        "REDUCE arguments are {}, not a tuple",
                        kind(&args, &self.arena)
                    ),
                ))
            }
        };
        let out = match g {
            Global::OrderedDict if args.is_empty() => Obj::Dict(Box::new(Dict {
                ordered: true,
                ..Dict::default()
            })),
            Global::OrderedDict => {
                return Err(bad(self.at, "OrderedDict called with arguments"));
            }
            Global::RebuildTensorV2 => Obj::Tensor(Box::new(self.rebuild_tensor(&args, false)?)),
            Global::RebuildTensorV3 => Obj::Tensor(Box::new(self.rebuild_tensor(&args, true)?)),
            Global::RebuildParameter => match args.as_slice() {
                [t, Value::Bool, hooks] => {
                    self.empty_hooks(hooks)?;
                    match self.obj(t) {
                        Some(Obj::Tensor(t)) => Obj::Tensor(t.clone()),
                        _ => return Err(bad(self.at, "_rebuild_parameter of a non-tensor")),
                    }
                }
                _ => {
                    return Err(bad(
                        self.at,
                        "_rebuild_parameter called with unexpected arguments",
                    ))
                }
            },
            Global::Storage(_) | Global::Dtype(_) => {
                return Err(bad(
                    self.at,
                    "REDUCE calls a storage class or dtype: only the tensor rebuild functions \
                     and OrderedDict may be called",
                ))
            }
        };
        let v = self.alloc(out)?;
        self.push(v)
    }

    fn persistent_load(&mut self) -> Result<(), PickleError> {
        let pid = self.pop()?;
        let at = self.at;
        let storage = match self.obj(&pid) {
            Some(Obj::Tuple(t)) => {
                match t.as_slice() {
                    [Value::Str(tag), Value::Global(Global::Storage(dtype)), Value::Str(key), Value::Str(_location), Value::Int(numel)]
                        if &**tag == "storage" && *numel >= 0 =>
                    {
                        Storage {
                            key: key.clone(),
                            dtype: *dtype,
                            numel: *numel as u64,
                        }
                    }
                    _ => return Err(bad(
                        at,
                        "persistent id is not ('storage', <storage class>, key, location, numel)",
                    )),
                }
            }
            _ => return Err(bad(at, "persistent id is not a tuple")),
        };
        let v = self.alloc(Obj::Storage(storage))?;
        self.push(v)
    }

    fn build(&mut self) -> Result<(), PickleError> {
        let state = self.pop()?;
        let target = self.top()?.clone();
        // An OrderedDict's state is its attributes (`_metadata` of a module's state dict):
        // irrelevant to the tensors.
        let ok_target = matches!(self.obj(&target), Some(Obj::Dict(d)) if d.ordered);
        let ok_state =
            matches!(state, Value::None) || matches!(self.obj(&state), Some(Obj::Dict(_)));
        if ok_target && ok_state {
            return Ok(());
        }
        Err(bad(
            self.at,
            format!(
                "BUILD of {} with {}: only an OrderedDict's attributes may be set",
                kind(&target, &self.arena),
                kind(&state, &self.arena)
            ),
        ))
    }

    /// Runs the pickle to its STOP; returns the value it leaves.
    fn run(&mut self) -> Result<Value, PickleError> {
        loop {
            self.at = self.c.offset();
            let op = self
                .c
                .u8()
                .map_err(|_| bad(self.at, "truncated pickle: no STOP"))?;
            if op == b'.' {
                return self.stop();
            }
            self.step(op)?;
        }
    }

    /// The error for an opcode a state dict does not use.
    fn unsupported(&self, op: u8) -> PickleError {
        PickleError::UnsupportedOpcode {
            offset: self.at,
            opcode: op,
            name: opcode_name(op),
        }
    }

    /// STOP: the one value left on the stack, with no mark open.
    fn stop(&mut self) -> Result<Value, PickleError> {
        if !self.marks.is_empty() {
            return Err(bad(self.at, "STOP with an open MARK"));
        }
        let v = self.pop()?;
        if !self.stack.is_empty() {
            return Err(bad(self.at, "STOP with more than one value on the stack"));
        }
        Ok(v)
    }

    /// Runs one opcode other than STOP: the structural ones here, constants in
    /// [`Machine::literal`], memo traffic in [`Machine::memo`].
    fn step(&mut self, op: u8) -> Result<(), PickleError> {
        match op {
            0x80 => {
                let v = self.c.u8().map_err(truncated)?;
                if v > 5 {
                    return Err(bad(self.at, format!("pickle protocol {v} is unknown")));
                }
            }
            0x95 => {
                self.c.u64().map_err(truncated)?;
            }
            b'(' => {
                if self.marks.len() >= MAX_MARKS {
                    return Err(PickleError::Limit {
                        offset: self.at,
                        what: "open marks",
                        limit: MAX_MARKS,
                    });
                }
                self.marks.push(self.stack.len());
            }
            b'}' => {
                let v = self.alloc(Obj::Dict(Box::default()))?;
                self.push(v)?;
            }
            b')' => self.tuple(Vec::new())?,
            b't' => {
                let items = self.pop_mark()?;
                self.tuple(items)?;
            }
            0x85..=0x87 => {
                let n = usize::from(op - 0x84);
                let mut items = Vec::with_capacity(n);
                for _ in 0..n {
                    items.push(self.pop()?);
                }
                items.reverse();
                self.tuple(items)?;
            }
            b'c' => {
                let module = self.line()?.to_string();
                let name = self.line()?.to_string();
                let g = resolve(self.at, &module, &name)?;
                self.push(Value::Global(g))?;
            }
            0x93 => {
                let name = self.pop()?;
                let module = self.pop()?;
                let (Value::Str(module), Value::Str(name)) = (module, name) else {
                    return Err(bad(self.at, "STACK_GLOBAL of values that are not strings"));
                };
                let g = resolve(self.at, &module, &name)?;
                self.push(Value::Global(g))?;
            }
            b'Q' => self.persistent_load()?,
            b'R' => self.reduce()?,
            b's' => {
                let v = self.pop()?;
                let k = self.pop()?;
                self.set_items(vec![k, v])?;
            }
            b'u' => {
                let items = self.pop_mark()?;
                self.set_items(items)?;
            }
            b'b' => self.build()?,
            b'0' => {
                self.pop()?;
            }
            b'X' | 0x8c | 0x8d | b'J' | b'K' | b'M' | 0x8a | 0x8b | b'G' | b'N' | 0x88 | 0x89 => {
                self.literal(op)?
            }
            b'q' | b'r' | 0x94 | b'h' | b'j' => self.memo(op)?,
            _ => return Err(self.unsupported(op)),
        }
        Ok(())
    }

    /// Opcodes that push a constant: strings, integers, floats (only their presence
    /// matters), None and booleans.
    fn literal(&mut self, op: u8) -> Result<(), PickleError> {
        match op {
            b'X' => {
                let n = self.c.u32().map_err(truncated)?;
                self.string(n.into())?;
            }
            0x8c => {
                let n = self.c.u8().map_err(truncated)?;
                self.string(n.into())?;
            }
            0x8d => {
                let n = self.c.u64().map_err(truncated)?;
                self.string(n)?;
            }
            b'J' => {
                let n = self.c.i32().map_err(truncated)?;
                self.push(Value::Int(n.into()))?;
            }
            b'K' => {
                let n = self.c.u8().map_err(truncated)?;
                self.push(Value::Int(n.into()))?;
            }
            b'M' => {
                let n = u16::from_le_bytes(self.c.le_array().map_err(truncated)?);
                self.push(Value::Int(n.into()))?;
            }
            0x8a => {
                let n = self.c.u8().map_err(truncated)?;
                self.int(n.into())?;
            }
            0x8b => {
                let n = self.c.u32().map_err(truncated)?;
                self.int(n.into())?;
            }
            b'G' => {
                let b: [u8; 8] = self.c.le_array().map_err(truncated)?;
                let _ = f64::from_be_bytes(b);
                self.push(Value::Float)?;
            }
            b'N' => self.push(Value::None)?,
            0x88 => self.push(Value::Bool)?,
            0x89 => self.push(Value::Bool)?,
            _ => return Err(self.unsupported(op)),
        }
        Ok(())
    }

    /// Opcodes that store the top of the stack in the memo or push a memoized value.
    fn memo(&mut self, op: u8) -> Result<(), PickleError> {
        match op {
            b'q' => {
                let i = self.c.u8().map_err(truncated)?;
                self.put(i.into())?;
            }
            b'r' => {
                let i = self.c.u32().map_err(truncated)?;
                self.put(i)?;
            }
            0x94 => {
                let i = u32::try_from(self.memo.len() + self.sparse_memo.len())
                    .map_err(|_| bad(self.at, "memo overflow"))?;
                self.put(i)?;
            }
            b'h' => {
                let i = self.c.u8().map_err(truncated)?;
                self.get(i.into())?;
            }
            b'j' => {
                let i = self.c.u32().map_err(truncated)?;
                self.get(i)?;
            }
            _ => return Err(self.unsupported(op)),
        }
        Ok(())
    }
}

/// pickletools' name of an opcode (for errors).
fn opcode_name(op: u8) -> &'static str {
    match op {
        b'(' => "MARK",
        b'.' => "STOP",
        b'0' => "POP",
        b'1' => "POP_MARK",
        b'2' => "DUP",
        b'F' => "FLOAT",
        b'I' => "INT",
        b'J' => "BININT",
        b'K' => "BININT1",
        b'L' => "LONG",
        b'M' => "BININT2",
        b'N' => "NONE",
        b'P' => "PERSID",
        b'Q' => "BINPERSID",
        b'R' => "REDUCE",
        b'S' => "STRING",
        b'T' => "BINSTRING",
        b'U' => "SHORT_BINSTRING",
        b'V' => "UNICODE",
        b'X' => "BINUNICODE",
        b'a' => "APPEND",
        b'b' => "BUILD",
        b'c' => "GLOBAL",
        b'd' => "DICT",
        b'}' => "EMPTY_DICT",
        b'e' => "APPENDS",
        b'g' => "GET",
        b'h' => "BINGET",
        b'i' => "INST",
        b'j' => "LONG_BINGET",
        b'l' => "LIST",
        b']' => "EMPTY_LIST",
        b'o' => "OBJ",
        b'p' => "PUT",
        b'q' => "BINPUT",
        b'r' => "LONG_BINPUT",
        b's' => "SETITEM",
        b't' => "TUPLE",
        b')' => "EMPTY_TUPLE",
        b'u' => "SETITEMS",
        b'G' => "BINFLOAT",
        0x80 => "PROTO",
        0x81 => "NEWOBJ",
        0x82 => "EXT1",
        0x83 => "EXT2",
        0x84 => "EXT4",
        0x85 => "TUPLE1",
        0x86 => "TUPLE2",
        0x87 => "TUPLE3",
        0x88 => "NEWTRUE",
        0x89 => "NEWFALSE",
        0x8a => "LONG1",
        0x8b => "LONG4",
        b'B' => "BINBYTES",
        b'C' => "SHORT_BINBYTES",
        0x8c => "SHORT_BINUNICODE",
        0x8d => "BINUNICODE8",
        0x8e => "BINBYTES8",
        0x8f => "EMPTY_SET",
        0x90 => "ADDITEMS",
        0x91 => "FROZENSET",
        0x92 => "NEWOBJ_EX",
        0x93 => "STACK_GLOBAL",
        0x94 => "MEMOIZE",
        0x95 => "FRAME",
        0x96 => "BYTEARRAY8",
        0x97 => "NEXT_BUFFER",
        0x98 => "READONLY_BUFFER",
        _ => "unknown",
    }
}

/// Runs the pickle `bytes` (the member `data.pkl`, at `base` in its file... offsets in errors
/// are relative to the pickle) and returns the state dict it builds, in the dict's order.
pub fn load_state_dict(bytes: &[u8]) -> Result<Vec<TensorSpec>, PickleError> {
    let budget = bytes
        .len()
        .saturating_mul(BUDGET_PER_BYTE)
        .saturating_add(BUDGET_FLOOR);
    load_within(bytes, budget).map(|(specs, _)| specs)
}

/// [`load_state_dict`] with a memory budget of `budget` bytes; also returns how much of it
/// was used.
fn load_within(bytes: &[u8], budget: usize) -> Result<(Vec<TensorSpec>, usize), PickleError> {
    let mut m = Machine {
        c: Cursor::new(bytes),
        stack: Vec::new(),
        marks: Vec::new(),
        memo: Vec::new(),
        sparse_memo: HashMap::new(),
        arena: Vec::new(),
        at: 0,
        budget,
        budget_total: budget,
    };
    let root = m.run()?;
    let end = m.at;
    let Some(Obj::Dict(d)) = m.obj(&root) else {
        return Err(bad(
            end,
            format!(
                "the pickle holds {}, not a state dict (a dict of tensors)",
                kind(&root, &m.arena)
            ),
        ));
    };
    let entries = &d.entries;
    // One shared key per storage, however many tensors name it.
    let mut keys: HashMap<*const u8, Arc<str>> = HashMap::new();
    let mut left = m.budget;
    let mut out = Vec::new();
    for (name, v) in entries {
        let Some(Obj::Tensor(t)) = m.obj(v) else {
            return Err(bad(
                end,
                format!(
                    "state dict entry '{name}' is {}, not a tensor",
                    kind(v, &m.arena)
                ),
            ));
        };
        let elem = t.storage.dtype.map_or(1, StDtype::size);
        let storage_bytes = t.storage.numel.checked_mul(elem).ok_or_else(|| {
            bad(
                end,
                format!(
                    "tensor '{name}': storage size {} overflows",
                    t.storage.numel
                ),
            )
        })?;
        // The record, its name and dims, and the tensor-table entry made of it.
        let record = std::mem::size_of::<TensorSpec>()
            + std::mem::size_of::<crate::hf::safetensors::StTensor>()
            + 2 * name.len()
            + (2 * t.shape.len() + t.stride.len()) * 8
            + 64;
        left = left.checked_sub(record).ok_or(PickleError::Limit {
            offset: end,
            what: "bytes of memory for the objects and records of a pickle this size",
            limit: m.budget_total,
        })?;
        let storage = keys
            .entry(t.storage.key.as_ptr())
            .or_insert_with(|| Arc::from(&*t.storage.key))
            .clone();
        out.push(TensorSpec {
            name: name.to_string(),
            storage,
            storage_bytes,
            dtype: t.dtype,
            offset: t.offset,
            shape: t.shape.clone(),
            stride: t.stride.clone(),
        });
    }
    Ok((out, m.budget_total - left))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_fixtures_need_at_most_two_thirds_of_the_budget() {
        let mut seen = 0;
        for dir in ["llama-spm-bin", "qwen2-bin"] {
            // The checkpoints as a user has them (their storages are stored once, with the
            // safetensors twin's tensors).
            let dir = ggufkit_testsupport::paths::fixture(dir);
            for e in std::fs::read_dir(dir).unwrap().flatten() {
                let p = e.path();
                if p.extension().is_none_or(|x| x != "bin") {
                    continue;
                }
                let file = std::fs::read(&p).unwrap();
                let members = super::super::zip::read_members(&file).unwrap();
                let pkl = members
                    .iter()
                    .find(|m| m.name.ends_with("/data.pkl"))
                    .unwrap();
                let bytes = pkl.data(&file);
                let (specs, used) = load_within(bytes, usize::MAX).unwrap();
                assert!(!specs.is_empty());
                let per_byte = used as f64 / bytes.len() as f64;
                assert!(
                    per_byte * 3.0 <= BUDGET_PER_BYTE as f64 * 2.0,
                    "{}: {per_byte:.1} bytes of memory per pickle byte",
                    p.display()
                );
                seen += 1;
            }
        }
        assert_eq!(seen, 3);
    }

    #[test]
    fn entries_naming_one_tensor_share_its_storage_key_and_are_budgeted() {
        // One tensor on a storage whose key is 64 KiB long, memoized, then named by many
        // keys: the key is shared, never copied per entry.
        let key = "k".repeat(64 << 10);
        let tensor = |key: &str| {
            let mut p = b"ctorch._utils\n_rebuild_tensor_v2\n((X\x07\x00\x00\x00storagectorch\nFloatStorage\nX".to_vec();
            p.extend((key.len() as u32).to_le_bytes());
            p.extend(key.as_bytes());
            p.extend(b"X\x03\x00\x00\x00cpuK\x01tQK\x00K\x01\x85K\x01\x85\x89ccollections\nOrderedDict\n)RtR");
            p
        };
        let named = |n: usize| {
            let mut p = b"\x80\x02}".to_vec();
            p.extend(tensor(&key));
            p.extend(b"q\x000");
            for i in 0..n {
                // Four characters each: the shortest distinct names a few bytes can hold.
                let name: String = (0..4)
                    .map(|d| (b'0' + ((i >> (6 * d)) & 63) as u8) as char)
                    .collect();
                p.push(0x8c);
                p.push(name.len() as u8);
                p.extend(name.as_bytes());
                p.extend(b"h\x00s");
            }
            p.push(b'.');
            p
        };
        let pkl = named(3000);
        let specs = load_state_dict(&pkl).unwrap();
        assert_eq!(specs.len(), 3000);
        assert!(specs
            .iter()
            .all(|s| Arc::ptr_eq(&s.storage, &specs[0].storage)));
        // Many more names of the one tensor than the pickle's size can pay for: refused.
        let pkl = named(800_000);
        match load_state_dict(&pkl) {
            Err(PickleError::Limit { what, .. }) => assert!(what.contains("memory"), "{what}"),
            other => panic!("{:?}", other.map(|s| s.len())),
        }
    }

    #[test]
    fn a_forbidden_global_is_refused_by_name() {
        let p = b"\x80\x02cposix\nsystem\nq\x00X\x02\x00\x00\x00lsq\x01\x85q\x02Rq\x03.";
        match load_state_dict(p) {
            Err(PickleError::ForbiddenGlobal { module, name, .. }) => {
                assert_eq!((module.as_str(), name.as_str()), ("posix", "system"));
            }
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn an_empty_state_dict_loads() {
        assert_eq!(load_state_dict(b"\x80\x02}q\x00.").unwrap(), vec![]);
        assert!(load_state_dict(b"\x80\x02}q\x00").is_err());
        assert!(load_state_dict(b"\x80\x02].").is_err());
    }

    #[test]
    fn deep_nesting_is_flat_and_bounded() {
        // 100k nested one-tuples: no recursion anywhere, so no stack overflow; not a dict.
        let mut p = b"\x80\x02N".to_vec();
        p.extend(std::iter::repeat_n(0x85u8, 100_000));
        p.push(b'.');
        assert!(matches!(
            load_state_dict(&p),
            Err(PickleError::Malformed { .. })
        ));
        let mut p = b"\x80\x02".to_vec();
        p.extend(std::iter::repeat_n(b'(', MAX_MARKS + 1));
        assert!(matches!(
            load_state_dict(&p),
            Err(PickleError::Limit { .. })
        ));
    }
}
