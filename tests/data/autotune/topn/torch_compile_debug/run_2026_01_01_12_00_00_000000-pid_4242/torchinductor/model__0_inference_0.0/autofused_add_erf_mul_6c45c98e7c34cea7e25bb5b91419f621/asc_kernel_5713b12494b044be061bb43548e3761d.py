from autofuse.compile_adapter import kernel_compile

tiling_def = r'''TilingData(tile_len=512, ub_size=65536, tail_len=128)'''
kernel_key = '5713b12494b044be061bb43548e3761d'
kernel_compile(tiling_def)
