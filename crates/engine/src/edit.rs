//! Editing documents with a function: a [Rhai](https://rhai.rs) script that sees one document
//! as `doc` and the request's `context`, and leaves `doc` changed, or `()` to delete it.
//!
//! The script is untrusted input, so the engine that runs it is closed and bounded:
//! - it sees nothing but `doc` and `context`: no modules (`import`), no clock, no file, and
//!   `print`/`debug` go nowhere;
//! - every run stops with an error past [`MAX_OPERATIONS`] operations (so `loop {}` fails its
//!   task instead of hanging the batch), [`MAX_CALL_LEVELS`] nested calls (so runaway
//!   recursion fails instead of overflowing the thread's stack), and the string, array and
//!   map sizes below (so a script that doubles a string fails instead of exhausting memory).
//!   Rhai counts the sizes of nested values together, so an array of large strings is bounded
//!   by [`MAX_STRING_SIZE`] as a whole.
//!
//! The bounds apply to each document's run: a function is as fast or slow on the last
//! document as on the first.

use api_types::{Code, Error, Result};
use rhai::{Dynamic, Engine, Scope, AST};
use serde_json::{Map, Value};

/// Operations one run may take (a loop iteration, an expression, a call each count).
pub const MAX_OPERATIONS: u64 = 1_000_000;
/// Nested function calls one run may make.
pub const MAX_CALL_LEVELS: usize = 64;
/// Bytes of string one value may hold (strings inside arrays and maps count together).
pub const MAX_STRING_SIZE: usize = 1 << 20;
/// Elements of array one value may hold.
pub const MAX_ARRAY_SIZE: usize = 10_000;
/// Entries of object map one value may hold.
pub const MAX_MAP_SIZE: usize = 10_000;
/// Variables one run may declare.
pub const MAX_VARIABLES: usize = 1_000;
/// Nesting of expressions in the function's text.
const MAX_EXPR_DEPTH: usize = 64;

/// What a function made of one document.
#[derive(Debug, PartialEq)]
pub enum Edition {
    /// The document as the function left it.
    Replaced(Map<String, Value>),
    /// The function set `doc = ()`.
    Deleted,
}

/// A compiled function, ready to run on documents one at a time.
pub struct DocumentEditor {
    engine: Engine,
    ast: AST,
    context: Dynamic,
}

fn bounded_engine() -> Engine {
    let mut engine = Engine::new();
    engine.set_max_operations(MAX_OPERATIONS);
    engine.set_max_call_levels(MAX_CALL_LEVELS);
    engine.set_max_string_size(MAX_STRING_SIZE);
    engine.set_max_array_size(MAX_ARRAY_SIZE);
    engine.set_max_map_size(MAX_MAP_SIZE);
    engine.set_max_variables(MAX_VARIABLES);
    engine.set_max_expr_depths(MAX_EXPR_DEPTH, MAX_EXPR_DEPTH);
    engine.on_print(|_| {});
    engine.on_debug(|_, _, _| {});
    engine
}

/// The error of a function that does not compile, as the route answers it (`bad_request`
/// with Rhai's message, e.g. "Script is incomplete (line 1, position 9)").
pub fn check_function(function: &str) -> Result<()> {
    bounded_engine()
        .compile(function)
        .map(|_| ())
        .map_err(|e| Error::new(Code::BadRequest, e.to_string()))
}

fn edition_error(message: impl std::fmt::Display) -> Error {
    Error::new(Code::EditDocumentsByFunctionError, message.to_string())
}

fn runtime_error(e: impl std::fmt::Display) -> Error {
    edition_error(format!(
        "Document edition runtime error encountered while running the function: {e}"
    ))
}

impl DocumentEditor {
    /// Compiles `function`; `context` is what the function sees as `context` (`()` if none).
    pub fn new(function: &str, context: Option<&Value>) -> Result<DocumentEditor> {
        let engine = bounded_engine();
        let ast = engine
            .compile(function)
            .map_err(|e| edition_error(format!("The function does not compile: {e}")))?;
        let context = match context {
            None | Some(Value::Null) => Dynamic::UNIT,
            Some(v) => rhai::serde::to_dynamic(v).map_err(runtime_error)?,
        };
        Ok(DocumentEditor {
            engine,
            ast,
            context,
        })
    }

    /// Runs the function on `doc`. The edited document keeps the order of the top-level fields
    /// it already had; see [`keep_order`].
    pub fn edit(&self, doc: &Map<String, Value>) -> Result<Edition> {
        let mut scope = Scope::new();
        let input = rhai::serde::to_dynamic(doc).map_err(runtime_error)?;
        scope.push_dynamic("doc", input);
        // A copy: what one document's run does to its context is not seen by the next.
        scope.push_constant_dynamic("context", self.context.clone());
        self.engine
            .run_ast_with_scope(&mut scope, &self.ast)
            .map_err(runtime_error)?;
        let out = scope.get_value::<Dynamic>("doc").unwrap_or(Dynamic::UNIT);
        if out.is_unit() {
            return Ok(Edition::Deleted);
        }
        if !out.is_map() {
            return Err(edition_error(
                "Document editions must keep documents as objects",
            ));
        }
        match rhai::serde::from_dynamic::<Value>(&out).map_err(runtime_error)? {
            Value::Object(edited) => Ok(Edition::Replaced(keep_order(edited, doc))),
            _ => Err(edition_error(
                "Document editions must keep documents as objects",
            )),
        }
    }
}

/// `edited` with the fields `before` had first, in their order; the fields the function added
/// follow in name order, as Rhai's maps keep them (nested objects too, as in Meilisearch).
fn keep_order(mut edited: Map<String, Value>, before: &Map<String, Value>) -> Map<String, Value> {
    let mut out = Map::with_capacity(edited.len());
    for k in before.keys() {
        if let Some(v) = edited.remove(k) {
            out.insert(k.clone(), v);
        }
    }
    out.extend(edited);
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn doc(v: Value) -> Map<String, Value> {
        match v {
            Value::Object(m) => m,
            _ => unreachable!(),
        }
    }

    fn run(function: &str, d: Value, context: Option<Value>) -> Result<Edition> {
        DocumentEditor::new(function, context.as_ref())?.edit(&doc(d))
    }

    #[test]
    fn test_edit_changes_fields_and_keeps_their_order() {
        let out = run(
            "doc.title = doc.title.to_upper() + context.suffix; doc.added = [1, 1.5, (), #{b: 2, a: 1}]; doc.n.x = 0",
            json!({"id": 1, "title": "hello", "n": {"z": 1, "y": 2}}),
            Some(json!({"suffix": "!"})),
        )
        .unwrap();
        let Edition::Replaced(d) = out else {
            panic!("not replaced")
        };
        assert_eq!(
            serde_json::to_string(&d).unwrap(),
            r#"{"id":1,"title":"HELLO!","n":{"x":0,"y":2,"z":1},"added":[1,1.5,null,{"a":1,"b":2}]}"#
        );
    }

    #[test]
    fn test_unit_doc_deletes() {
        assert_eq!(
            run("doc = ()", json!({"id": 1}), None).unwrap(),
            Edition::Deleted
        );
    }

    #[test]
    fn test_non_object_doc_fails() {
        let e = run("doc = 5", json!({"id": 1}), None).unwrap_err();
        assert_eq!(e.code, Code::EditDocumentsByFunctionError);
    }

    #[test]
    fn test_function_that_does_not_compile_is_a_bad_request() {
        let e = check_function("doc.n = ").unwrap_err();
        assert_eq!(e.code, Code::BadRequest);
        assert!(e.message.contains("line 1"), "{}", e.message);
        check_function("doc.n = 1").unwrap();
    }

    #[test]
    fn test_runaway_functions_fail_within_bounds() {
        for f in [
            "loop {}",
            "let s = \"ab\"; loop { s += s; }",
            "let a = []; loop { a.push(1); }",
            "let m = #{}; let i = 0; loop { m[`k${i}`] = i; i += 1; }",
            "fn f(x) { f(x + 1) } f(1)",
            "let a = [\"x\"]; loop { a += a; }",
        ] {
            let e = run(f, json!({"id": 1}), None).unwrap_err();
            assert_eq!(e.code, Code::EditDocumentsByFunctionError, "{f}");
            assert!(
                e.message.starts_with(
                    "Document edition runtime error encountered while running the function: "
                ),
                "{f}: {}",
                e.message
            );
        }
    }

    #[test]
    fn test_context_is_the_same_for_every_document() {
        let context = json!({"n": 1, "list": [1]});
        // `context` is a constant: changing it is an error.
        let e = run(
            "context.list.push(2)",
            json!({"id": 1}),
            Some(context.clone()),
        );
        assert_eq!(e.unwrap_err().code, Code::EditDocumentsByFunctionError);
        // A copy may change; the next document still sees the context as sent.
        let editor = DocumentEditor::new(
            "let c = context; c.list.push(2); c.n += 1; doc.n = c.n; doc.len = context.list.len();",
            Some(&context),
        )
        .unwrap();
        let first = editor.edit(&doc(json!({"id": 1}))).unwrap();
        let second = editor.edit(&doc(json!({"id": 1}))).unwrap();
        assert_eq!(first, second);
        assert_eq!(
            first,
            Edition::Replaced(doc(json!({"id": 1, "len": 1, "n": 2})))
        );
    }

    #[test]
    fn test_function_sees_no_clock_and_no_modules() {
        assert!(run("doc.t = timestamp()", json!({"id": 1}), None).is_err());
        assert!(check_function("import \"x\" as y;").is_err());
    }
}
