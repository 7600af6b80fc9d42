"""Markers, questions and a client for the API-key tests."""
from __future__ import annotations

from rest_framework.test import APIClient

HR_MARKER, FIN_MARKER = "ZEBRAQUARTZ", "MANGOFLUX"
HR_TEXT = f"人事部的门禁密码是{HR_MARKER}。门禁密码{HR_MARKER}每季度更换。年假申请需要提前一周提交给直属经理。"
FIN_TEXT = f"财务部的报销审批口令是{FIN_MARKER}。报销审批口令{FIN_MARKER}只告诉部门负责人。"
HR_QUESTION, FIN_QUESTION = "人事部的门禁密码是什么？", "财务部的报销审批口令是什么？"


def _api(user=None, key: str | None = None) -> APIClient:
    client = APIClient()
    if user is not None:
        client.force_authenticate(user=user)
    if key is not None:
        client.credentials(HTTP_AUTHORIZATION=f"Bearer {key}")
    return client


