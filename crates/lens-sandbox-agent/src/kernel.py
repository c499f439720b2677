# The persistent Python kernel of a Lens sandbox: reads cells (a big-endian u32 length,
# then UTF-8 code) on stdin and runs each in one namespace, so names and imports persist
# like in a notebook. The first frame is not a cell but the agent's nonce. After each
# cell the kernel writes "<nonce> <status>\n" on descriptor 3, a pipe of its own that no
# cell's output goes to; the nonce lives only in a local of `_kernel`, never in the
# environment or in `__main__`, so a cell's output cannot end the cell early.
import os, sys


def _kernel():
    import ast, traceback

    # The status pipe is the kernel's alone: no program a cell starts inherits it.
    os.set_inheritable(3, False)
    code_in = sys.stdin.buffer
    sys.stdin = open(os.devnull)
    ns = {"__name__": "__main__", "__builtins__": __builtins__}

    def read_frame():
        head = code_in.read(4)
        if len(head) < 4:
            return None
        return code_in.read(int.from_bytes(head, "big")).decode("utf-8", "replace")

    def run(code):
        tree = ast.parse(code, "<cell>", "exec")
        last = None
        # As in a notebook, the value of a last bare expression is shown.
        if tree.body and isinstance(tree.body[-1], ast.Expr):
            last = ast.Expression(tree.body.pop().value)
        exec(compile(tree, "<cell>", "exec"), ns)
        if last is not None:
            value = eval(compile(last, "<cell>", "eval"), ns)
            if value is not None:
                print(repr(value))

    def show_error():
        # The kernel's own frames (this file runs as "<string>") are not the person's code.
        kind, value, tb = sys.exc_info()
        while tb is not None and tb.tb_frame.f_code.co_filename == "<string>":
            tb = tb.tb_next
        traceback.print_exception(kind, value, tb)

    nonce = (read_frame() or "").encode()
    while True:
        try:
            cell = read_frame()
        except KeyboardInterrupt:
            continue
        if cell is None:
            break
        status = "ok"
        try:
            run(cell)
        except KeyboardInterrupt:
            status = "interrupted"
            show_error()
        except SystemExit as e:
            status = "exit:%d" % (e.code if isinstance(e.code, int) else 1)
        except BaseException:
            status = "error"
            show_error()
        try:
            sys.stdout.flush()
            sys.stderr.flush()
        except BaseException:
            pass
        while True:
            try:
                os.write(3, nonce + b" " + status.encode() + b"\n")
                break
            except KeyboardInterrupt:
                continue


_kernel()
