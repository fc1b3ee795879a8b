from django.urls import path

from apps.reach.widget import views

# Under /widget/: the embeddable widget's script (its words filled in) and its one request.
urlpatterns = [
    path("widget.js", views.widget_script, name="reach-widget-script"),
    path("ask", views.widget_ask, name="reach-widget-ask"),
]
