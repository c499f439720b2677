# The persistent Python kernel of a Lens sandbox: reads cells (a big-endian u32 length,
# then UTF-8 code) on stdin and runs each in one namespace, so names and imports persist
# like in a notebook. After each cell it writes "\0<nonce> <status>\n" to both stdout and
# stderr, so the agent knows where the cell's output ends. The nonce is removed from the
# environment before any cell runs, so a cell cannot fake the end of its own output.
import ast, os, sys, traceback

_nonce = os.environ.pop("LENS_KERNEL_NONCE", "")
_code_in = sys.stdin.buffer
sys.stdin = open(os.devnull)
_ns = {"__name__": "__main__", "__builtins__": __builtins__}


def _read_cell():
    head = _code_in.read(4)
    if len(head) < 4:
        return None
    return _code_in.read(int.from_bytes(head, "big")).decode("utf-8", "replace")


def _run(code):
    tree = ast.parse(code, "<cell>", "exec")
    last = None
    # As in a notebook, the value of a last bare expression is shown.
    if tree.body and isinstance(tree.body[-1], ast.Expr):
        last = ast.Expression(tree.body.pop().value)
    exec(compile(tree, "<cell>", "exec"), _ns)
    if last is not None:
        value = eval(compile(last, "<cell>", "eval"), _ns)
        if value is not None:
            print(repr(value))


def _show_error():
    # The kernel's own frames (this file runs as "<string>") are not the person's code.
    kind, value, tb = sys.exc_info()
    while tb is not None and tb.tb_frame.f_code.co_filename == "<string>":
        tb = tb.tb_next
    traceback.print_exception(kind, value, tb)


while True:
    try:
        cell = _read_cell()
    except KeyboardInterrupt:
        continue
    if cell is None:
        break
    status = "ok"
    try:
        _run(cell)
    except KeyboardInterrupt:
        status = "interrupted"
        _show_error()
    except SystemExit as e:
        status = "exit:%d" % (e.code if isinstance(e.code, int) else 1)
    except BaseException:
        status = "error"
        _show_error()
    try:
        sys.stdout.flush()
        sys.stderr.flush()
    except BaseException:
        pass
    mark = ("\0%s %s\n" % (_nonce, status)).encode()
    os.write(1, mark)
    os.write(2, mark)
