"""The stores and in-process indexes behind retrieval and memory: Milvus collections, dense and BM25 indexes."""
