"""DocMind: knowledge-base question answering on Django."""
import os

# gRPC (the Milvus client) registers fork handlers that restart its pollers in a forked child; a child forked
# while another thread is inside gRPC can abort there before it executes its program (seen as parse children,
# OCR and sandbox runs dying with SIGABRT). DocMind forks only to execute another program, which needs none of
# it. Read when grpc is first imported, so it is set here, before any of DocMind imports it.
os.environ.setdefault("GRPC_ENABLE_FORK_SUPPORT", "false")
