from django.contrib.auth.decorators import login_required
from django.http import HttpResponse
from django.urls import path

app_name = "chat"

urlpatterns = [path("", login_required(lambda r: HttpResponse("DocMind chat")), name="page")]
