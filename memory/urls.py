from rest_framework.routers import SimpleRouter

from memory.api import UserMemoryViewSet

router = SimpleRouter()
router.register("memories", UserMemoryViewSet, basename="memory")
urlpatterns = router.urls
