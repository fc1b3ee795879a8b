from django.urls import path

from apps.identity.api import views

urlpatterns = [
    path("Users", views.Users.as_view(), name="scim-users"),
    path("Users/<str:pk>", views.OneUser.as_view(), name="scim-user"),
    path("Groups", views.Groups.as_view(), name="scim-groups"),
    path("Groups/<str:pk>", views.OneGroup.as_view(), name="scim-group"),
    path("ServiceProviderConfig", views.ServiceProviderConfig.as_view(), name="scim-config"),
    path("Schemas", views.Schemas.as_view(), name="scim-schemas"),
    path("ResourceTypes", views.ResourceTypes.as_view(), name="scim-resource-types"),
]
