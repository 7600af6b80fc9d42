"""Every text DocMind sends to a language model, one module per concern, and the schema of each JSON reply.

A module's docstring says what its prompt asks and what reply it expects; the call passes the schema
(`complete(…, response_schema=Schema)`) and the reply is read with
`docmind.llm.replies.parse_reply(Schema, reply.content, what=…)`, never field by field by hand.
"""
