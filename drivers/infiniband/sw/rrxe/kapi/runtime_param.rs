// SPDX-License-Identifier: GPL-2.0

//! A boolean module parameter that may be changed while the module is
//! loaded, through `/sys/module/<module>/parameters/<name>` (mode 0644):
//! what C's `module_param(name, bool, 0644)` gives.  The `module!` macro's
//! parameters are set once, at load, and do not appear in sysfs.
//!
//! The value is an atomic: the sysfs store (`kernel_param_lock` held by
//! the caller, `param_attr_store`) and readers on any CPU need no other
//! lock.  A reader sees the old or the new value; which one a packet
//! already being built used does not matter to the callers (each decision
//! is taken once per use).  [`runtime_bool_param!`] declares one.

use kernel::{
    bindings,
    ffi::{c_char, c_int},
    sync::atomic::{ordering::Relaxed, Atomic},
};

/// The value of a parameter declared with [`runtime_bool_param!`].
pub(crate) struct RuntimeBool(Atomic<bool>);

impl RuntimeBool {
    /// A parameter whose value is `default` until set.
    pub(crate) const fn new(default: bool) -> Self {
        Self(Atomic::new(default))
    }

    /// The current value.
    pub(crate) fn get(&self) -> bool {
        self.0.load(Relaxed)
    }
}

/// The parameter a `kernel_param` names.
///
/// # Safety
///
/// `kp` is a `kernel_param` made by [`runtime_bool_param!`], whose `arg`
/// is a `&'static RuntimeBool`.
unsafe fn param_of(kp: *const bindings::kernel_param) -> &'static RuntimeBool {
    // SAFETY: `kp` is valid (caller's contract); `arg` is the active union
    // field of a `runtime_bool_param!` parameter.
    let arg = unsafe { (*kp).__bindgen_anon_1.arg };
    // SAFETY: `arg` points at a `static RuntimeBool` (caller's contract).
    unsafe { &*arg.cast::<RuntimeBool>() }
}

/// `kernel_param_ops::set`: parses `val` as `kstrtobool` does (`1`, `y`,
/// `on`, `0`, `n`, `off`, ...); no value (`modprobe rdma_rrxe gso`) means
/// true, as for C's bool parameters.
///
/// # Safety
///
/// `kp` is the `kernel_param` these ops belong to (made by
/// [`runtime_bool_param!`]); `val` is null or a NUL-terminated string.
unsafe extern "C" fn set(val: *const c_char, kp: *const bindings::kernel_param) -> c_int {
    let mut on = true;
    if !val.is_null() {
        // SAFETY: A non-null `val` is a NUL-terminated string (the module
        // loader's argument, or the sysfs store's buffer); `on` is valid
        // for a write.
        let ret = unsafe { bindings::kstrtobool(val, &mut on) };
        if ret != 0 {
            return ret;
        }
    }
    // SAFETY: `kp` is a `runtime_bool_param!` parameter (function's
    // contract).
    unsafe { param_of(kp) }.0.store(on, Relaxed);
    0
}

/// `kernel_param_ops::get`: `Y` or `N` and a newline, as C's bool
/// parameters print.
///
/// # Safety
///
/// `kp` is the `kernel_param` these ops belong to (made by
/// [`runtime_bool_param!`]); `buf` is valid for writes of `PAGE_SIZE`
/// bytes.
unsafe extern "C" fn get(buf: *mut c_char, kp: *const bindings::kernel_param) -> c_int {
    // SAFETY: As in `set`.
    let text: &[u8; 2] = if unsafe { param_of(kp) }.get() {
        b"Y\n"
    } else {
        b"N\n"
    };
    // SAFETY: `buf` is valid for `PAGE_SIZE` bytes (function's contract:
    // `param_attr_show`'s buffer), disjoint from `text`.
    unsafe { core::ptr::copy_nonoverlapping(text.as_ptr(), buf.cast::<u8>(), text.len()) };
    text.len() as c_int
}

/// The operations of every [`runtime_bool_param!`] parameter.
pub(crate) static RUNTIME_BOOL_OPS: bindings::kernel_param_ops = bindings::kernel_param_ops {
    flags: bindings::KERNEL_PARAM_OPS_FL_NOARG,
    set: Some(set),
    get: Some(get),
    free: None,
};

/// A `.modinfo` entry, `text` without its terminating NUL, as an array
/// of `N` bytes (`text.len() + 1`).
pub(crate) const fn modinfo<const N: usize>(text: &str) -> [u8; N] {
    let bytes = text.as_bytes();
    assert!(bytes.len() + 1 == N);
    let mut out = [0u8; N];
    let mut i = 0;
    while i < bytes.len() {
        out[i] = bytes[i];
        i += 1;
    }
    out
}

/// Declares `static NAME: RuntimeBool`, a boolean parameter of module
/// `MODULE` called `PARAM` in sysfs and on the command line
/// (`MODULE.PARAM=` when built in), mode 0644, with its `modinfo`
/// description:
///
/// ```ignore
/// runtime_bool_param! {
///     /// Doc comment.
///     static GSO: "rdma_rrxe"."gso" = true, "Send multi-packet messages as UDP GSO batches";
/// }
/// if GSO.get() { ... }
/// ```
macro_rules! runtime_bool_param {
    {
        $(#[$meta:meta])*
        static $name:ident: $module:literal . $param:literal = $default:expr, $desc:literal;
    } => {
        $(#[$meta])*
        pub(crate) static $name: $crate::kapi::runtime_param::RuntimeBool =
            $crate::kapi::runtime_param::RuntimeBool::new($default);

        // `link_section` counts as unsafe code: the statics below go where
        // the module loader reads parameters (`__param`) and `modinfo`
        // reads descriptions (`.modinfo`), as `module!`'s do.
        // What the readers of those sections expect is there: `PARAM` is a
        // complete `kernel_param` (its `arg` a `'static RuntimeBool`, the
        // type its ops expect) and the `.modinfo` entries are
        // NUL-terminated strings.
        #[allow(unsafe_code)]
        const _: () = {
            /// The name the kernel matches: bare for a loadable module,
            /// prefixed by the module's name when built in.
            const NAME: &::core::ffi::CStr = if ::core::cfg!(MODULE) {
                match ::core::ffi::CStr::from_bytes_with_nul(
                    ::core::concat!($param, "\0").as_bytes(),
                ) {
                    Ok(s) => s,
                    Err(_) => panic!("parameter name with a NUL"),
                }
            } else {
                match ::core::ffi::CStr::from_bytes_with_nul(
                    ::core::concat!($module, ".", $param, "\0").as_bytes(),
                ) {
                    Ok(s) => s,
                    Err(_) => panic!("parameter name with a NUL"),
                }
            };

            #[link_section = "__param"]
            #[used(compiler)]
            static PARAM: ::kernel::module_param::KernelParam =
                ::kernel::module_param::KernelParam::new(::kernel::bindings::kernel_param {
                    name: ::kernel::str::as_char_ptr_in_const_context(NAME),
                    // Made by the module loader, it outlives the module's
                    // parameters.
                    #[cfg(MODULE)]
                    mod_: &raw mut ::kernel::bindings::__this_module,
                    #[cfg(not(MODULE))]
                    mod_: ::core::ptr::null_mut(),
                    ops: &raw const $crate::kapi::runtime_param::RUNTIME_BOOL_OPS,
                    perm: 0o644,
                    level: -1,
                    flags: 0,
                    __bindgen_anon_1: ::kernel::bindings::kernel_param__bindgen_ty_1 {
                        arg: ::core::ptr::from_ref(&$name).cast_mut().cast(),
                    },
                });

            const PARM: &str = if ::core::cfg!(MODULE) {
                ::core::concat!("parm=", $param, ":", $desc)
            } else {
                ::core::concat!($module, ".parm=", $param, ":", $desc)
            };
            const PARMTYPE: &str = if ::core::cfg!(MODULE) {
                ::core::concat!("parmtype=", $param, ":bool")
            } else {
                ::core::concat!($module, ".parmtype=", $param, ":bool")
            };
            #[link_section = ".modinfo"]
            #[used(compiler)]
            static MODINFO_PARM: [u8; PARM.len() + 1] =
                $crate::kapi::runtime_param::modinfo(PARM);
            #[link_section = ".modinfo"]
            #[used(compiler)]
            static MODINFO_PARMTYPE: [u8; PARMTYPE.len() + 1] =
                $crate::kapi::runtime_param::modinfo(PARMTYPE);
        };
    };
}
pub(crate) use runtime_bool_param;
