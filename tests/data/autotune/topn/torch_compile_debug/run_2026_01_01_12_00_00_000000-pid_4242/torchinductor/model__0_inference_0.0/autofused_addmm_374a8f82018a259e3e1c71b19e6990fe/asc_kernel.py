from autofuse.compile_adapter import jit_compile

jit_compile()
