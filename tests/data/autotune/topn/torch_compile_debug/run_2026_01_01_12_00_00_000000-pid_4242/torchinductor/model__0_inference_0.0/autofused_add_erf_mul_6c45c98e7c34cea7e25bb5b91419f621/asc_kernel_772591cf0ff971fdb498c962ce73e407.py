from autofuse.compile_adapter import kernel_compile

tiling_def = r'''TilingData(tile_len=2048, ub_size=196608, tail_len=512)'''
kernel_key = '772591cf0ff971fdb498c962ce73e407'
kernel_compile(tiling_def)
